import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import type { z } from 'zod';
import { READ_ONLY_FIELDS } from '../src/domain/listings/input.js';
import { declaredKeys } from '../src/domain/unknown-keys.js';
import { operations, resolve, type Schema } from './fuzz/document.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * The hostile-text layer (issue 28): every route of both APIs, every place a client puts text
 * (each path parameter, each query parameter, each top-level body field, X-Request-Id) gets odd
 * text: U+0000, an unpaired surrogate, bytes that are not UTF-8, another charset, a right-to-left
 * override, 64 KB, 10,000 names, deep nesting. The partner API's places come from its OpenAPI
 * document (docs/openapi.json); the operator API has none, so its places come from the routes'
 * own schemas (App.routeList). Every answer must be
 * - a 4xx in the error envelope whose requestId is the X-Request-Id header, or
 * - a success that kept exactly what was sent (read back where the answer does not show it),
 * - never a 5xx, and within a bound of time;
 * and afterwards request records, usage counts and webhook deliveries still work for everyone.
 */

const ADMIN = '/api/admin/v1';
/**
 * Body fields a write does not store as sent (docs/contract.md#put-replaces: read-only fields are
 * ignored; a body's reference is taken only when it is the path's).
 */
const IGNORED = new Set<string>(['externalReference', 'external_reference', ...READ_ONLY_FIELDS]);
const SCOPES = [...ALL_SCOPES, 'manage:webhooks'];
/** Longest any one answer may take, hostile or not (two cores shared with the database). */
const BOUND_MS = 5000;

/** Odd strings, as a JSON string value and in a URL. */
const TEXTS: Record<string, string> = {
  nul: 'a\u0000b',
  surrogate: 'x\ud800y',
  rtl: '\u202Eevil\u202C.exe',
  big: 'x'.repeat(64 * 1024),
  accents: 'Citroën Škoda 😀',
  // Inside a value of a shape a field checks first (a URL, an address): the check of the shape
  // must not let the NUL or the surrogate through.
  nulInUrl: 'https://img.example/a\u0000b.jpg',
  surrogateInUrl: 'https://img.example/\ud800.jpg',
};
/** The same in a URL: invalid %-sequences stand for what a URL cannot carry as text. */
const URL_TEXTS: Record<string, string> = {
  nul: 'a%00b',
  surrogate: 'x%ED%A0%80y',
  notUtf8: 'Citro%EBn',
  rtl: encodeURIComponent(TEXTS.rtl!),
  long: 'x'.repeat(6000),
  accents: encodeURIComponent(TEXTS.accents!),
};
const manyKeys = () => Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
const deep = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

interface Place {
  route: string;
  method: string;
  /** Path with its parameters filled (valid unless this place is one of them). */
  path: string;
  query: string;
  body?: Buffer | string;
  contentType?: string;
  requestId?: string;
  /** What was put where, for the failure message and the read-back. */
  what: string;
  /** The caller's credentials (a partner secret or the operator token). */
  auth?: Record<string, string>;
  /** For a body field: its name and the string sent, checked against a success's answer. */
  field?: { name: string; sent: unknown };
}

interface Outcome {
  status: number;
  ms: number;
}

describe('hostile-text layer: every route, every place, odd text', () => {
  let app: TestApp;
  let tree: Tree;
  let caller: { id: string; secret: string };
  let target: { id: string; secret: string };
  let receiver: Receiver;
  const world: Record<string, string> = {};
  const tally = { requests: 0, byStatus: new Map<number, number>(), slowestMs: 0 };

  before(async () => {
    app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: '1' });
    tree = await createTree(app);
    caller = await createPartner(app, { global: true, scopes: SCOPES });
    target = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
    receiver = await startReceiver();
    const reference = unique('layer');
    const put = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret: caller.secret,
      body: listingBody({ dealerLocationCode: tree.codes.A }),
    });
    assert.equal(put.status, 201, put.text);
    world.reference = reference;
    world.listing = put.body.data.listingId;
    const hook = await app.call('POST', `${EXT}/webhooks`, {
      secret: caller.secret,
      body: { url: `${receiver.url}/layer`, filter: { status: ['sold'] } },
    });
    assert.equal(hook.status, 201, hook.text);
    world.webhook = hook.body.data.id;
    world.dealer = tree.ids.A!;
    world.partner = target.id;
    world.operator = (await app.admin('POST', '/operators', { name: unique('op') })).id;
    world.requestId = unique('known');
    await app.call('GET', `${EXT}/listings?nope=1`, {
      secret: caller.secret,
      headers: { 'x-request-id': world.requestId },
    });
  });
  after(async () => {
    await receiver?.close();
    await app?.close();
  });

  /** A valid value for a path parameter, by route and name. */
  function pathValue(route: string, method: string, name: string): string {
    if (name === 'requestId') return world.requestId!;
    if (name === 'externalReference') return world.reference!;
    if (name === 'listing') return method === 'GET' ? world.listing! : world.reference!;
    if (route.includes('/webhooks/')) return world.webhook!;
    if (route.includes('/partners/')) return world.partner!;
    if (route.includes('/operators/')) return world.operator!;
    return world.dealer!; // dealers/{id}, locations/{id}
  }

  /** A valid body for an operation, so that one field at a time can be made odd. */
  function validBody(route: string, method: string): Record<string, unknown> | undefined {
    const key = `${method} ${route}`;
    const bodies: Record<string, () => Record<string, unknown>> = {
      [`PUT ${EXT}/listings/{listing}`]: () => listingBody({ dealerLocationCode: tree.codes.A }),
      [`POST ${EXT}/listings/bulk-upsert`]: () => ({
        items: [{ externalReference: unique('bulk'), ...listingBody({ dealerLocationCode: tree.codes.A }) }],
      }),
      [`POST ${EXT}/listings/{externalReference}/status`]: () => ({ status: 'active' }),
      [`POST ${EXT}/webhooks`]: () => ({ url: `${receiver.url}/x`, filter: { status: ['sold'] } }),
      [`PATCH ${EXT}/webhooks/{id}`]: () => ({ description: 'layer' }),
      [`POST ${EXT}/webhooks/{id}/resume`]: () => ({}),
      [`POST ${ADMIN}/dealers`]: () => ({ locationCode: unique('L'), parentId: tree.ids.B }),
      [`POST ${ADMIN}/dealers/import`]: () => ({ dealers: [{ locationCode: unique('I') }] }),
      [`PATCH ${ADMIN}/dealers/:id`]: () => ({ displayName: 'Layer dealer' }),
      [`POST ${ADMIN}/partners`]: () => ({ name: unique('P'), access: { scope: 'global' } }),
      [`PATCH ${ADMIN}/partners/:id`]: () => ({ name: unique('P') }),
      [`POST ${ADMIN}/partners/:id/rotate-secret`]: () => ({ graceSeconds: 60 }),
      [`POST ${ADMIN}/webhooks/:id/disable`]: () => ({ reason: 'layer' }),
      [`POST ${ADMIN}/operators`]: () => ({ name: unique('op') }),
    };
    return bodies[key]?.();
  }

  /** The places of one route: its path and query parameters and its body's top-level fields. */
  function placesOf(
    route: string,
    method: string,
    pathNames: string[],
    queryNames: string[],
    bodyFields: string[] | undefined,
    auth: Record<string, string>,
  ): Place[] {
    const fill = (template: string, odd?: [string, string]) =>
      template.replace(/\{(\w+)\}|:(\w+)/g, (_, a: string | undefined, b: string | undefined) => {
        const name = (a ?? b)!;
        return odd && odd[0] === name ? odd[1] : encodeURIComponent(pathValue(route, method, name));
      });
    const places: Place[] = [];
    for (const name of pathNames) {
      for (const [kind, value] of Object.entries(URL_TEXTS)) {
        places.push({
          route,
          method,
          path: fill(route, [name, value]),
          query: '',
          what: `path ${name}=${kind}`,
        });
      }
    }
    for (const name of queryNames) {
      for (const [kind, value] of Object.entries(URL_TEXTS)) {
        places.push({
          route,
          method,
          path: fill(route),
          query: `?${name}=${value}`,
          what: `query ${name}=${kind}`,
        });
      }
      places.push({
        route,
        method,
        path: fill(route),
        query: `?${URL_TEXTS.nul}=1`,
        what: 'query name with NUL',
      });
    }
    const base = validBody(route, method);
    if (base && bodyFields) {
      // Bulk items carry the listing's fields one level down.
      const inItems = Array.isArray(base.items) && route.endsWith('bulk-upsert');
      const withField = (name: string, value: unknown) => {
        if (!inItems) return { ...base, [name]: value };
        const [item] = base.items as Record<string, unknown>[];
        return { ...base, items: [{ ...item, [name]: value }] };
      };
      for (const [i, name] of bodyFields.entries()) {
        for (const [kind, value] of Object.entries(TEXTS)) {
          places.push({
            route,
            method,
            path: fill(route),
            query: '',
            body: JSON.stringify(withField(name, value)),
            what: `body ${name}=${kind}`,
            field: { name, sent: value },
          });
        }
        if (i > 0) continue;
        // The shapes and encodings once per route, at its first field.
        places.push(
          {
            route,
            method,
            path: fill(route),
            query: '',
            body: JSON.stringify(withField(name, manyKeys())),
            what: `body ${name}=10,000 names`,
          },
          {
            route,
            method,
            path: fill(route),
            query: '',
            body: JSON.stringify(withField(name, deep(200))),
            what: `body ${name}=200 levels`,
          },
          {
            route,
            method,
            path: fill(route),
            query: '',
            body: Buffer.from(JSON.stringify(withField(name, 'Citroën')), 'latin1'),
            what: `body ${name}=Latin-1 bytes`,
          },
          {
            route,
            method,
            path: fill(route),
            query: '',
            body: JSON.stringify(withField(name, 'x')),
            contentType: 'application/json; charset=windows-1252',
            what: 'body in windows-1252',
          },
          {
            route,
            method,
            path: fill(route),
            query: '',
            body: JSON.stringify(withField(name, 'x')).replace(/"x"/, '"\\u0000"'),
            what: `body ${name}=escaped NUL`,
          },
        );
      }
    }
    // X-Request-Id: on an answer that exists but changes nothing (a missing id for writes).
    const harmless = method === 'GET' ? fill(route) : route.replace(/\{(\w+)\}|:(\w+)/g, 'missing-0');
    for (const [kind, id] of [
      ['long', 'r'.repeat(300)],
      ['spaces', 'a b c'],
      ['latin1', 'caf\u00e9'],
    ] as const) {
      places.push({ route, method, path: harmless, query: '', requestId: id, what: `X-Request-Id ${kind}` });
    }
    return places.map((p) => ({ ...p, auth }));
  }

  async function send(place: Place): Promise<Outcome> {
    const headers: Record<string, string> = { ...(place.auth ?? {}) };
    if (place.body !== undefined) headers['content-type'] = place.contentType ?? 'application/json';
    if (place.requestId !== undefined) headers['x-request-id'] = place.requestId;
    const started = performance.now();
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${app.url}${place.path}${place.query}`, {
        method: place.method as 'GET',
        headers,
        body: place.body,
        dispatcher: app.dispatcher,
        signal: AbortSignal.timeout(BOUND_MS),
      });
    } catch (error) {
      // undici refuses to send a header value it cannot encode: not the service's answer.
      if ((error as { code?: string }).code === 'UND_ERR_INVALID_ARG') return { status: 0, ms: 0 };
      throw new Error(`${place.method} ${place.route} ${place.what}: ${(error as Error).message}`);
    }
    const text = await res.body.text();
    const ms = performance.now() - started;
    tally.requests++;
    tally.byStatus.set(res.statusCode, (tally.byStatus.get(res.statusCode) ?? 0) + 1);
    tally.slowestMs = Math.max(tally.slowestMs, ms);
    const where = `${place.method} ${place.route} ${place.what} → ${res.statusCode} ${text.slice(0, 300)}`;
    assert.ok(res.statusCode < 500, where);
    const requestId = res.headers['x-request-id'];
    assert.equal(typeof requestId, 'string', `no X-Request-Id: ${where}`);
    if (place.requestId !== undefined && !/^[\x21-\x7e]{1,128}$/.test(place.requestId)) {
      assert.notEqual(requestId, place.requestId, `an unacceptable X-Request-Id is replaced: ${where}`);
    }
    if (res.statusCode >= 400) {
      const body = JSON.parse(text);
      assert.equal(typeof body.error?.code, 'string', where);
      assert.equal(typeof body.error?.message, 'string', where);
      assert.equal(body.error.requestId, requestId, where);
    } else if (place.field && typeof place.field.sent === 'string' && res.statusCode < 300) {
      await assertKept(place, text, where);
    }
    return { status: res.statusCode, ms };
  }

  /** A success with odd text in a field kept exactly that text (modulo the documented trim). */
  async function assertKept(place: Place, text: string, where: string): Promise<void> {
    const { name, sent } = place.field!;
    let data = JSON.parse(text).data;
    if (place.route === `${EXT}/listings/{listing}` && place.method === 'PUT') {
      const read = await app.call('GET', `${EXT}/listings/${data.listingId}`, { secret: caller.secret });
      data = read.body.data;
    }
    if (IGNORED.has(name)) return;
    if (data && typeof data === 'object' && name in data && typeof data[name] === 'string') {
      assert.ok(data[name] === sent || data[name] === (sent as string).trim(), `kept as sent: ${where}`);
    }
  }

  test('the partner API, from its OpenAPI document: no 5xx, the envelope, bounded time', async () => {
    const auth = { authorization: `Bearer ${caller.secret}` };
    let places = 0;
    for (const op of operations) {
      const route = `${EXT}${op.template}`;
      const bodySchema = op.body ? resolve(op.body) : undefined;
      const fields = bodySchema ? bodyFieldsOf(bodySchema) : undefined;
      const list = placesOf(
        route,
        op.method,
        op.pathParams.map((p) => p.name),
        op.query.map((p) => p.name),
        fields,
        auth,
      );
      for (const place of list) await send(place);
      places += list.length;
    }
    assert.ok(places > 500, `places tried: ${places}`);
  });

  test('the operator API, from its routes’ schemas: no 5xx, the envelope, bounded time', async () => {
    const auth = { authorization: `Bearer ${app.running.adminToken}` };
    const routes = app.running.app.routeList.filter((r) => r.url.startsWith(`${ADMIN}/`));
    assert.ok(routes.length >= 20, `admin routes: ${routes.length}`);
    for (const r of routes) {
      const schema = r.schema ?? {};
      const pathNames = [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const queryNames = schema.querystring ? (declaredKeys(schema.querystring as z.ZodType) ?? []) : [];
      const bodyFields = schema.body ? declaredKeys(schema.body as z.ZodType) : undefined;
      for (const place of placesOf(r.url, r.method, pathNames, queryNames, bodyFields, auth))
        await send(place);
    }
  });

  test('afterwards, records, usage and deliveries still work for everyone', async () => {
    const other = await createPartner(app, { roots: [tree.ids.B!], scopes: SCOPES });
    const id = unique('after');
    const refused = await app.call('GET', `${EXT}/listings?stauts=1`, {
      secret: other.secret,
      headers: { 'x-request-id': id },
    });
    assert.equal(refused.status, 400);
    const kept = await app.call('GET', `${EXT}/requests/${id}`, { secret: other.secret });
    assert.equal(kept.status, 200, kept.text);
    const usage = await app.admin('GET', `/partners/${other.id}/usage`);
    assert.ok(usage.totals.requests >= 2, JSON.stringify(usage.totals));

    // Deliveries: a new endpoint of another partner gets its listings, signed, in order.
    const fresh = await startReceiver();
    try {
      const hook = await app.call('POST', `${EXT}/webhooks`, {
        secret: other.secret,
        body: { url: `${fresh.url}/after` },
      });
      assert.equal(hook.status, 201, hook.text);
      fresh.secrets.push(hook.body.data.secret);
      const put = await app.call('PUT', `${EXT}/listings/${unique('after')}`, {
        secret: other.secret,
        body: listingBody({ dealerLocationCode: tree.codes.B }),
      });
      assert.equal(put.status, 201, put.text);
      const until = Date.now() + 15_000;
      while (!fresh.listings.has(put.body.data.listingId)) {
        if (Date.now() > until)
          assert.fail(`no delivery: ${JSON.stringify(fresh.requests.map((r) => r.type))}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(fresh.problems, []);
    } finally {
      await fresh.close();
    }

    const metrics = await app.call('GET', `${ADMIN}/metrics`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    for (const name of [
      'forecourt_request_records_set_aside_total',
      'forecourt_request_record_write_failures_total',
      'forecourt_webhook_round_failures_total',
    ]) {
      assert.match(metrics.text, new RegExp(`^${name} 0$`, 'm'), name);
    }
    // For the record (docs/reliability.md): how many answers of each status, the slowest.
    console.log(
      `hostile layer: ${tally.requests} requests, ${JSON.stringify(Object.fromEntries(tally.byStatus))}, slowest ${Math.round(tally.slowestMs)} ms`,
    );
  });
});

/** The top-level fields of a body schema (for an array or `{items}` of listings: a listing's). */
function bodyFieldsOf(schema: Schema): string[] {
  const options = (schema.anyOf as Schema[] | undefined)?.map(resolve) ?? [schema];
  for (const option of options) {
    if (option.type === 'object' && option.properties?.items) {
      return Object.keys(resolve({ $ref: '#/components/schemas/ListingWrite' }).properties);
    }
    if (option.type === 'object' && option.properties) return Object.keys(option.properties);
  }
  return [];
}
