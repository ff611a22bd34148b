import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { EVENT_TYPE_NAMES } from '../src/domain/events/registry.js';
import { fits, fitsText, operations, PREFIX, resolve, type Schema } from './fuzz/document.js';
import { edges } from './fuzz/schema-arbitrary.js';
import { ALL_SCOPES, bootApp, createPartner, createTree, type TestApp, type Tree } from './helpers/app.js';

/**
 * The document says exactly what the service checks, in the spirit of Schemathesis: requests are
 * generated from values around every documented rule, judged by a JSON Schema validator against
 * docs/openapi.json (as a validating gateway or a generated client would), and sent to the real
 * service. What the document calls valid must be accepted (no 4xx but the rules across fields it
 * describes in words); what it calls invalid must be refused with a 4xx, never written.
 */

const document = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../docs/openapi.json'), 'utf8'));
// multipleOf judged in decimal, as the document means it (19.99 is a multiple of 0.01).
const ajv = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: 9 });
ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
const listingWrite = ajv.getSchema('openapi#/components/schemas/ListingWrite')!;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const NEXT_YEAR = new Date().getUTCFullYear() + 1;

let app: TestApp;
let secret: string;
let tree: Tree;
before(async () => {
  // Loopback webhook addresses allowed: the webhook bodies below register endpoints on 127.0.0.1.
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  tree = await createTree(app);
  // One root: new listings default to it, so the dealer rule never applies here.
  secret = (await createPartner(app, { roots: [tree.ids.B!], scopes: [...ALL_SCOPES, 'manage:webhooks'] }))
    .secret;
});
after(() => app.close());

/** Values around each documented rule, inside and on the bounds first, then outside them or in other forms. */
const FIELDS: Record<string, { inside: readonly unknown[]; outside: readonly unknown[] }> = {
  title: {
    inside: ['Skoda Octavia Combi', ' padded ', 'x'.repeat(200)],
    outside: ['', '   ', 'x'.repeat(201), 42],
  },
  price: { inside: [18950, 19.99, 0.01, 12.5, 10_000_000, null], outside: [0, -5, 10_000_001, '18950'] },
  currency: { inside: ['EUR', 'eur', ' Eur ', null], outside: ['USD', '', 7] },
  year: { inside: [1900, 2015, NEXT_YEAR - 1, null], outside: [1850, 1899, 2015.5, '2015'] },
  mileage: { inside: [0, 123_456, 2_000_000, null], outside: [2_000_001, -1] },
  doors: { inside: [0, 5, 10, null], outside: [11, 2.5] },
  latitude: { inside: [50.85, -90, 90, null], outside: [90.5, '50'] },
  vin: {
    inside: ['WVWZZZ1JZ3W386752', 'wvwzzz1jz3w386752', ' WVWZZZ1JZ3W386752 ', '', null],
    outside: ['abc', 'WVWZZZ1JZ3W38675I'],
  },
  firstRegistration: {
    inside: ['2019-04', '2019-04-17', ' 2019-04 ', null],
    outside: ['2019/04', 'April 2019'],
  },
  fuelType: { inside: ['petrol', 'DIESEL', 'Plugin Hybrid', ' ev ', '', null], outside: ['steam', 3] },
  status: { inside: ['active', 'SOLD', 'draft', ' pending ', null], outside: ['gone', true] },
  historyReportUrl: {
    inside: ['https://www.car-pass.be/r/123', '12345678901', null],
    outside: ['http://www.car-pass.be/r/1', '123'],
  },
  images: {
    inside: [
      ['https://img.example.com/1.jpg'],
      [{ url: 'https://img.example.com/2.jpg', position: 1 }],
      null,
    ],
    outside: [['ftp://x/1'], 'x.jpg'],
  },
  serviceHistory: { inside: [true, false, null], outside: ['yes'] },
};

const fieldsFrom = (pick: (f: (typeof FIELDS)[string]) => readonly unknown[]) =>
  fc.record(
    Object.fromEntries(Object.entries(FIELDS).map(([name, f]) => [name, fc.constantFrom(...pick(f))])),
    { requiredKeys: [] },
  );
// Half the bodies use values inside the rules only (with a title), half mix in values outside them:
// both sides of the property are exercised in every run.
const body = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...FIELDS.title!.inside),
      fieldsFrom((f) => f.inside),
    )
    .map(([title, rest]) => ({ ...rest, title })),
  fieldsFrom((f) => [...f.inside, ...f.outside]),
);

/** The issues the document describes in words only: a listing on offer needs a price. */
const onlyCrossField = (issues: { path: string; code: string }[]) =>
  issues.length > 0 && issues.every((issue) => issue.path === 'price' && issue.code === 'required');

test('listing bodies: valid by the document ⇔ accepted by the service (PUT, dry run)', async () => {
  let accepted = 0;
  let refused = 0;
  let n = 0;
  await fc.assert(
    fc.asyncProperty(body, async (listing) => {
      const documentSays = listingWrite(listing);
      const reply = await app.call('PUT', `/api/external/v1/listings/PROP-${n++}?dryRun=true`, {
        secret,
        body: listing,
      });
      const why = `${JSON.stringify(listing)} → ${reply.status} ${reply.text.slice(0, 400)}; document: ${JSON.stringify(listingWrite.errors?.slice(0, 3))}`;
      if (documentSays) {
        const ok = reply.status === 200 || reply.status === 201;
        assert.ok(
          ok || (reply.status === 422 && onlyCrossField(reply.body.error.issues)),
          `valid by the document, refused: ${why}`,
        );
        if (ok) accepted++;
      } else {
        assert.ok(
          reply.status === 422 || reply.status === 400,
          `invalid by the document, not refused: ${why}`,
        );
        refused++;
      }
    }),
    { numRuns: RUNS },
  );
  // Both sides were exercised (else the property says nothing).
  assert.ok(accepted > 0 && refused > 0, `accepted ${accepted}, refused ${refused}`);
});

/** The parameters of an operation as one object schema, values coerced from the query string. */
function querySchema(operationPath: string, method: string) {
  const params = document.paths[operationPath][method].parameters.filter(
    (p: { in: string }) => p.in === 'query',
  );
  const coercing = new Ajv2020({ strict: false, coerceTypes: true, multipleOfPrecision: 9 });
  addFormats.default(coercing);
  coercing.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
  return coercing.compile({
    type: 'object',
    properties: Object.fromEntries(params.map((p: { name: string; schema: unknown }) => [p.name, p.schema])),
    additionalProperties: false,
  });
}

test('GET /listings queries: valid by the document ⇔ answered 200', async () => {
  const validate = querySchema('/listings', 'get');
  const QUERY: Record<string, readonly string[]> = {
    pageSize: ['1', '50', '200', '0', '201', 'ten'],
    page: ['1', '3', '0', '-1'],
    status: ['active', 'sold', 'all', 'ACTIVE', 'gone'],
    mine: ['true', 'FALSE', '1', '0', 'yes'],
    sort: ['updatedAt', '-price', 'createdAt', 'random'],
    locationId: ['6f1c2b0e-8d4a-4e7b-9c1d-2a3b4c5d6e7f', 'not-a-uuid'],
    // A space for the T (no offset: UTC), and a + sent unencoded (arrives as a space): both match
    // the document's pattern, so both must be accepted (Stoplight Prism found the first refused).
    updatedSince: [
      '2026-01-01T00:00:00Z',
      '2026-01-01',
      '2026-11-26 02:00',
      '2026-11-26T02:00 01:00',
      'yesterday',
      '2026-11-26 02',
    ],
  };
  const query = fc.record(
    Object.fromEntries(Object.entries(QUERY).map(([name, values]) => [name, fc.constantFrom(...values)])),
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(query, async (params) => {
      const copy = { ...params };
      const documentSays = validate(copy);
      const reply = await app.call(
        'GET',
        `/api/external/v1/listings?${new URLSearchParams(params as Record<string, string>)}`,
        {
          secret,
        },
      );
      const why = `${JSON.stringify(params)} → ${reply.status} ${reply.text.slice(0, 300)}`;
      // A dealer filter outside the scope is a scope rule (403), not a malformed request.
      const scopeRule = reply.status === 403 && reply.body.error.code === 'PROFILE_FORBIDDEN';
      if (documentSays)
        assert.ok(reply.status === 200 || scopeRule, `valid by the document, refused: ${why}`);
      else assert.equal(reply.status, 400, `invalid by the document, not refused: ${why}`);
    }),
    { numRuns: Math.ceil(RUNS / 2) },
  );
});

/** The JSON Schema of an operation's body as the document states it, and whether a body is required. */
function bodySchema(operationPath: string, method: string) {
  const requestBody = document.paths[operationPath][method].requestBody;
  return {
    validate: ajv.compile(
      JSON.parse(
        JSON.stringify(requestBody.content['application/json'].schema).replaceAll(
          '"#/components/',
          '"openapi#/components/',
        ),
      ),
    ),
    required: requestBody.required === true,
  };
}

test('webhook bodies: valid by the document ⇔ accepted by the service (create, update, resume)', async () => {
  const url = 'https://127.0.0.1:9/hooks/forecourt';
  const CASES: Record<string, { path: string; method: string; bodies: unknown[] }> = {
    create: {
      path: '/webhooks',
      method: 'post',
      bodies: [
        { url },
        { url, description: 'Stock mirror', filter: { status: ['active', 'sold'] } },
        { url, description: null, filter: null },
        { url, filter: { dealerProfileIds: null, status: null } },
        { url, secret: 'whsec_mine' },
        { url, enabled: false },
        { url, filter: { status: ['active'], dealers: [] } },
        { url, filter: { status: [] } },
        { url: '' },
        {},
      ],
    },
    update: {
      path: '/webhooks/{id}',
      method: 'patch',
      bodies: [
        { description: 'renamed' },
        { enabled: false },
        { filter: null },
        { url: `${url}/2`, description: null },
        {},
        { enabled: false, paused: true },
        { filter: { status: ['active'], extra: 1 } },
        { enabled: 'no' },
      ],
    },
    resume: {
      path: '/webhooks/{id}/resume',
      method: 'post',
      bodies: [undefined, {}, { cursor: 'x'.repeat(1001) }, { from: 'start' }],
    },
  };
  let accepted = 0;
  let refused = 0;
  for (const [name, { path: operationPath, method, bodies }] of Object.entries(CASES)) {
    const { validate, required } = bodySchema(operationPath, method);
    for (const body of bodies) {
      const documentSays = body === undefined ? !required : validate(body);
      let id: string | undefined;
      if (operationPath !== '/webhooks') {
        const created = await app.call('POST', '/api/external/v1/webhooks', { secret, body: { url } });
        assert.equal(created.status, 201, created.text);
        id = created.body.data.id;
      }
      const target = `/api/external/v1${operationPath.replace('{id}', id ?? '')}`;
      const reply = await app.call(method.toUpperCase(), target, {
        secret,
        ...(body === undefined ? {} : { body }),
      });
      const why = `${name} ${JSON.stringify(body)} → ${reply.status} ${reply.text.slice(0, 300)}; document: ${JSON.stringify(validate.errors?.slice(0, 2))}`;
      if (documentSays) {
        assert.ok(reply.status >= 200 && reply.status < 300, `valid by the document, refused: ${why}`);
        accepted++;
      } else {
        assert.ok(
          reply.status === 422 || reply.status === 400,
          `invalid by the document, not refused: ${why}`,
        );
        refused++;
      }
      // At most 20 endpoints a partner: each case removes what it made.
      const made = id ?? (reply.status === 201 ? reply.body.data.id : undefined);
      if (made) await app.call('DELETE', `/api/external/v1/webhooks/${made}`, { secret });
    }
  }
  assert.ok(accepted >= 8 && refused >= 10, `accepted ${accepted}, refused ${refused}`);
});

/**
 * Every field of every partner operation at its documented edges (issue 40): path and query
 * parameters and every body field, nested ones too, walked from docs/openapi.json. For each, the
 * values `edges` builds around what the document says (each bound and one step past it, a
 * pattern's samples and the same with a control character or outer white space put in, enum
 * values and one that is not, other types), each judged by the document (Ajv) and sent to the
 * service in an otherwise valid request. Inside by the document: the service must not refuse the
 * request for that field. Outside: it must refuse it with 400 or 422 and an issue naming that
 * field. What a JSON Schema cannot say is in the field's description and listed in EXCEPTIONS
 * below: a disagreement that is not listed fails, and so does a listed one that no value showed.
 */

interface Place {
  op: string;
  where: 'path' | 'query' | 'body';
  /** The field's path in its part: ["images", "[]", "url"]; [] for the body itself. */
  path: string[];
  schema: Schema;
}

const isDay = (date: string) => {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(y, m - 1, d ?? 1));
  probe.setUTCFullYear(y);
  return probe.getUTCMonth() === m - 1 && probe.getUTCDate() === (d ?? 1);
};
const CURSOR = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}$/;
/** A date-time whose day does not exist, or whose instant falls outside the years 1 to 9999. */
const impossibleInstant = (value: unknown) => {
  const text = String(value).trim();
  if (!isDay(text.slice(0, 10))) return true;
  const year = Number(text.slice(0, 4));
  return year === 1 || year === 9999;
};
const anything = () => true;

/**
 * Disagreements the document states in words because JSON Schema cannot (each in the field's
 * description), by `operation where path` (`*`: every operation with that field). `inside`: a
 * value the document allows that the service refuses; `outside`: one it refuses that the service
 * takes (here only where the test's own configuration allows more than production does).
 */
interface Exception {
  place: string;
  side: 'inside' | 'outside';
  why: string;
  applies: (value: unknown) => boolean;
  /** Values of this side the service answers otherwise: sent at each such place, so the exception is shown to hold. */
  examples: unknown[];
}
const FORGED_CURSOR = `eyJ2IjoxLCJwIjpudWxsfQ.${'A'.repeat(32)}`;
const EXCEPTIONS: Exception[] = [
  {
    place: '* body year',
    side: 'inside',
    why: 'at most next year: the bound moves every 1 January, the document does not',
    applies: (v) => typeof v === 'number' && v > new Date().getUTCFullYear() + 1,
    examples: [new Date().getUTCFullYear() + 2],
  },
  {
    place: '* body firstRegistration',
    side: 'inside',
    why: 'a day of the calendar, not in the future',
    applies: (v) => {
      const text = String(v).trim();
      const day = text.length === 7 ? `${text}-01` : text;
      return !isDay(day) || day > new Date().toISOString().slice(0, 10);
    },
    examples: ['2019-02-30', `${new Date().getUTCFullYear() + 1}-12`],
  },
  {
    place: '* query updatedSince',
    side: 'inside',
    why: 'the day must exist; years 1 to 9999',
    applies: impossibleInstant,
    examples: ['2021-02-30', '9999-12-31T23:00-02:00'],
  },
  {
    place: '* query updated_since',
    side: 'inside',
    why: 'the day must exist; years 1 to 9999',
    applies: impossibleInstant,
    examples: ['2021-02-30', '9999-12-31T23:00-02:00'],
  },
  {
    place: 'listRequests query since',
    side: 'inside',
    why: 'the day must exist; years 1 to 9999',
    applies: impossibleInstant,
    examples: ['2021-02-30', '9999-12-31T23:00-02:00'],
  },
  {
    place: '* query cursor',
    side: 'inside',
    why: 'only a cursor this service issued (signed, for the same filters)',
    applies: (v) => CURSOR.test(String(v)),
    examples: [FORGED_CURSOR],
  },
  {
    place: 'resumeWebhookEndpoint body cursor',
    side: 'inside',
    why: "only the cursor of one of this endpoint's deliveries",
    applies: (v) => CURSOR.test(String(v)),
    examples: [FORGED_CURSOR],
  },
  {
    place: '* body url',
    side: 'outside',
    why: 'http: this test allows private targets (WEBHOOK_ALLOW_PRIVATE), where http is taken; production takes https only',
    applies: (v) => /^http:\/\//i.test(String(v)),
    examples: ['http://127.0.0.1:9/hooks/edge'],
  },
  {
    place: '* body url',
    side: 'inside',
    why: 'the host must resolve, to a public address (checked when the URL is saved)',
    applies: anything,
    examples: ['https://no-such-host.invalid/hook'],
  },
];

/** Places whose edges are not sent, and why. */
const NOT_WALKED: Record<string, string> = {
  // On a PUT and a PATCH the path names the listing: a reference in the body must be the path's
  // (the description says so; any other value is reference_mismatch, listings-write.test.ts). In a
  // bulk upsert it is each item's, and items are walked on PUT.
  'upsertListing body externalReference': 'the path names the listing: only its reference is taken',
  'upsertListing body external_reference': 'the path names the listing: only its reference is taken',
  'patchListing body externalReference': 'the path names the listing: only its reference is taken',
  'patchListing body external_reference': 'the path names the listing: only its reference is taken',
};

/** The exceptions stated for a place. */
function exceptionsOf(place: Place): Exception[] {
  const names = [key(place), `* ${place.where} ${place.path.join(' ')}`];
  return EXCEPTIONS.filter((e) => names.includes(e.place));
}

/** The exception that excuses this value at this place on this side, if one does. */
function exceptionFor(place: Place, side: 'inside' | 'outside', value: unknown): Exception | undefined {
  return exceptionsOf(place).find((e) => e.side === side && e.applies(value));
}

const key = (p: Place) => `${p.op} ${p.where} ${p.path.join(' ')}`.trimEnd();

/** Every field of a schema, nested objects and array items included. */
function fieldsOf(
  schema: Schema,
  path: string[] = [],
  seen = new Set<Schema>(),
): { path: string[]; schema: Schema }[] {
  const node = resolve(schema);
  if (seen.has(node)) return [];
  const out = path.length ? [{ path, schema }] : [];
  const next = new Set(seen).add(node);
  const branches = ((node.anyOf ?? node.oneOf) as Schema[] | undefined)?.map(resolve) ?? [node];
  for (const branch of branches) {
    for (const [name, child] of Object.entries((branch.properties ?? {}) as Record<string, Schema>))
      out.push(...fieldsOf(child, [...path, name], next));
    if (branch.items && Object.keys(branch.items).some((k) => k !== 'description'))
      out.push(...fieldsOf(branch.items, [...path, '[]'], next));
  }
  return out;
}

function placesOf(op: (typeof operations)[number]): Place[] {
  const out: Place[] = [];
  for (const p of op.pathParams) out.push({ op: op.id, where: 'path', path: [p.name], schema: p.schema });
  for (const p of op.query) out.push({ op: op.id, where: 'query', path: [p.name], schema: p.schema });
  const body = document.paths[op.template][op.method.toLowerCase()].requestBody?.content?.['application/json']
    ?.schema as Schema | undefined;
  if (body) {
    out.push({ op: op.id, where: 'body', path: [], schema: body });
    for (const f of fieldsOf(body)) out.push({ op: op.id, where: 'body', ...f });
  }
  return out;
}

/**
 * A valid value of each nested object a field sits in, by its path: the field's value is set
 * into it. A nested object with required fields that is not here fails the test (its fields would
 * be refused for a sibling's sake).
 */
const NESTED: Record<string, unknown> = {
  'images []': { url: 'https://img.example.com/1.jpg' },
  'features []': { category: 'comfort', name: 'Heated seats' },
};

/** Sets a value at a field path in a copy of a body: ["images", "[]", "url"] → {images: [{url}]}. */
function withValue(base: unknown, path: string[], value: unknown, at: string[] = []): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const here = [...at, head!];
  if (head === '[]') {
    const items = Array.isArray(base) && base.length ? base : [NESTED[here.join(' ')]];
    return [withValue(items[0], rest, value, here)];
  }
  const object =
    base && typeof base === 'object' && !Array.isArray(base)
      ? (base as Record<string, unknown>)
      : ((NESTED[at.join(' ')] as Record<string, unknown> | undefined) ?? {});
  return { ...object, [head!]: withValue(object[head!], rest, value, here) };
}

test('every field at its documented edges: inside is not refused for it, outside is (document ⇔ service)', async (t) => {
  const listing = await app.call('PUT', `${PREFIX}/listings/EDGE-1`, {
    secret,
    body: { title: 'Edge', price: 19950 },
  });
  assert.ok(listing.status === 201 || listing.status === 200, listing.text);
  const hook = await app.call('POST', `${PREFIX}/webhooks`, {
    secret,
    body: { url: 'https://127.0.0.1:9/hooks/edge' },
  });
  assert.equal(hook.status, 201, hook.text);
  // A test ping sends only the types its endpoint subscribes to, and the walk PATCHes `hook`'s
  // events: the pings go to an endpoint of their own that subscribes to every type.
  const pinged = await app.call('POST', `${PREFIX}/webhooks`, {
    secret,
    body: { url: 'https://127.0.0.1:9/hooks/pinged', events: EVENT_TYPE_NAMES },
  });
  assert.equal(pinged.status, 201, pinged.text);
  /** An otherwise valid request of each operation: its path values, query and body. */
  const BASE: Record<
    string,
    { path?: Record<string, string>; query?: Record<string, string>; body?: unknown }
  > = {
    getListing: { path: { listing: listing.body.data.id } },
    upsertListing: {
      path: { listing: 'EDGE-PUT' },
      query: { dryRun: 'true' },
      body: { title: 'Edge', status: 'draft', price: 19950 },
    },
    patchListing: { path: { listing: 'EDGE-1' }, body: { title: 'Edge patched', status: 'draft' } },
    markListingSold: { path: { listing: 'EDGE-GONE' } },
    bulkUpsertListings: { query: { dryRun: 'true' }, body: [{ externalReference: 'EDGE-B', title: 'Edge' }] },
    setListingStatus: { path: { externalReference: 'EDGE-1' }, body: { status: 'draft' } },
    getLocation: { path: { id: tree.ids.B! } },
    listLocationListings: { path: { id: tree.ids.B! } },
    createWebhookEndpoint: { body: { url: 'https://127.0.0.1:9/hooks/edge' } },
    updateWebhookEndpoint: { path: { id: hook.body.data.id }, body: { description: 'Edge' } },
    resumeWebhookEndpoint: { path: { id: hook.body.data.id }, body: {} },
    getWebhookEndpoint: { path: { id: hook.body.data.id } },
    listWebhookDeliveries: { path: { id: hook.body.data.id } },
    deleteWebhookEndpoint: { path: { id: hook.body.data.id } },
    rotateWebhookSecret: { path: { id: hook.body.data.id } },
    testWebhookEndpoint: { path: { id: pinged.body.data.id } },
  };
  const failures: string[] = [];
  const used = new Set<Exception>();
  let sent = 0;
  let places = 0;
  for (const op of operations) {
    for (const place of placesOf(op)) {
      if (NOT_WALKED[key(place)]) continue;
      places++;
      const text = place.where !== 'body';
      const fitsValue = text ? fitsText : fits;
      const { inside, outside } = edges(place.schema, fitsValue, { text });
      // Each exception's examples too: on the side it names by the document, or it is stale.
      for (const exception of exceptionsOf(place)) {
        for (const example of exception.examples) {
          const side = fitsValue(place.schema, example) ? 'inside' : 'outside';
          if (side !== exception.side)
            failures.push(
              `${key(place)}: the exception's example ${JSON.stringify(example)} is ${side} by the document now`,
            );
          (side === 'inside' ? inside : outside).push(example);
        }
      }
      const base = BASE[op.id] ?? {};
      for (const [side, values] of [
        ['inside', inside],
        ['outside', outside],
      ] as const) {
        for (const value of values) {
          // A URL cannot carry an unpaired surrogate (it has no UTF-8): only bodies are sent one.
          if (text && /\p{Cs}/u.test(value as string)) continue;
          // An empty path segment is another path (another operation, or none).
          if (place.where === 'path' && value === '') continue;
          const pathValues = { ...base.path };
          const query = { ...base.query };
          let body = base.body;
          if (place.where === 'path') pathValues[place.path[0]!] = value as string;
          else if (place.where === 'query') query[place.path[0]!] = value as string;
          else body = withValue(body, place.path, value);
          const target = op.template.replace(/\{(\w+)\}/g, (_, name: string) =>
            encodeURIComponent(pathValues[name] ?? 'EDGE-X'),
          );
          const search = new URLSearchParams(query).toString();
          const reply = await app.call(op.method, `${PREFIX}${target}${search ? `?${search}` : ''}`, {
            secret,
            ...(body === undefined ? {} : { body }),
          });
          sent++;
          // What a webhook test creates is removed again (at most 20 endpoints a partner).
          if (op.id === 'createWebhookEndpoint' && reply.status === 201)
            await app.call('DELETE', `${PREFIX}/webhooks/${reply.body.data.id}`, { secret });
          const named = namesField(reply, place);
          const refused = (reply.status === 400 || reply.status === 422) && named;
          const agrees = side === 'inside' ? !refused && reply.status < 500 : refused;
          if (agrees) continue;
          const exception = exceptionFor(place, side, value);
          if (exception) {
            used.add(exception);
            continue;
          }
          failures.push(
            `${key(place)} = ${JSON.stringify(value)} (${side} by the document): ${reply.status} ${reply.text.slice(0, 200)}`,
          );
        }
      }
    }
  }
  const unused = EXCEPTIONS.filter((e) => !used.has(e)).map((e) => `${e.place} (${e.side}): ${e.why}`);
  t.diagnostic(`${places} fields and parameters, ${sent} requests, ${used.size} exceptions shown`);
  if (process.env.EDGES_OUT)
    (await import('node:fs')).writeFileSync(process.env.EDGES_OUT, failures.join('\n'));
  assert.deepEqual(failures, [], `${failures.length} disagreements of ${sent} requests`);
  assert.deepEqual(unused, [], 'exceptions no value showed: remove them');
});

/** Whether a refusal names the field: an issue at its path (or the message, where there are none). */
function namesField(reply: { body: any }, place: Place): boolean {
  const error = reply.body?.error;
  if (!error) return false;
  const prefix = place.where === 'path' ? 'params.' : place.where === 'query' ? 'query.' : '';
  const names =
    place.where === 'path' && place.path[0] === 'listing'
      ? ['id', 'externalReference']
      : [place.path.join('.')];
  const paths = names.map((n) => `${prefix}${n.replaceAll('.[]', '.0').replace(/^\[\]/, '0')}`);
  const issues = (error.issues ?? []) as { path: string }[];
  if (place.path.length === 0 && place.where === 'body') return true;
  // A path is refused at the door when it cannot even be read (U+0000): it names the path.
  if (place.where === 'path' && error.code === 'BAD_REQUEST') return /path/i.test(error.message);
  // A bulk body's shape (its items) is refused as a whole.
  if (place.where === 'body' && place.path.length === 1 && !issues.length)
    return ['INVALID_BODY', 'EMPTY_PAYLOAD', 'TOO_MANY_ITEMS'].includes(error.code);
  // An item of a union (an image as a URL or {url, position}) is refused as the item: images.0.
  const items = paths.flatMap((p) => {
    const at = p.search(/\.\d+(\.|$)/);
    return at >= 0 ? [p.slice(0, p.indexOf('.', at + 1) < 0 ? p.length : p.indexOf('.', at + 1))] : [];
  });
  return issues.some((issue) =>
    [...paths, ...items].some(
      (p) => issue.path === p || issue.path.startsWith(`${p}.`) || (p === '' && issue.path === '(root)'),
    ),
  );
}
