import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { ALL_SCOPES, bootApp, createPartner, createTree, type TestApp } from './helpers/app.js';

/**
 * The document says exactly what the service checks, in the spirit of Schemathesis: requests are
 * generated from values around every documented rule, judged by a JSON Schema validator against
 * docs/openapi.json (as a validating gateway or a generated client would), and sent to the real
 * service. What the document calls valid must be accepted (no 4xx but the rules across fields it
 * describes in words); what it calls invalid must be refused with a 4xx, never written.
 */

const document = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../docs/openapi.json'), 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
const listingWrite = ajv.getSchema('openapi#/components/schemas/ListingWrite')!;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const NEXT_YEAR = new Date().getUTCFullYear() + 1;

let app: TestApp;
let secret: string;
before(async () => {
  // Loopback webhook addresses allowed: the webhook bodies below register endpoints on 127.0.0.1.
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const tree = await createTree(app);
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
  const coercing = new Ajv2020({ strict: false, coerceTypes: true });
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
