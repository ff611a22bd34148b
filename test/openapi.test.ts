import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_CODES } from '../src/api/openapi/error-codes.js';
import { PROBLEMS } from '../src/domain/errors.js';
import { bootApp, type Reply, type TestApp } from './helpers/app.js';
import { assertContract } from './helpers/contract.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const committed = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
const reply = (status: number, body: unknown): Reply => ({
  status,
  headers: {},
  body,
  text: body === undefined ? '' : JSON.stringify(body),
});

describe('the OpenAPI document', () => {
  let app: TestApp;
  before(async () => {
    app = await bootApp();
  });
  after(() => app.close());

  test('is served without a secret and equals docs/openapi.json (run `npm run openapi` after a schema change)', async () => {
    const res = await app.call('GET', '/api/external/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.body.openapi, '3.1.0');
    assert.deepEqual(res.body, committed, 'docs/openapi.json is stale: run `npm run openapi`');
  });

  test('documents every partner operation, and nothing of the operator API', () => {
    const operations = Object.entries(committed.paths).flatMap(([p, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${p}`),
    );
    assert.deepEqual(operations.sort(), [
      'DELETE /listings/{listing}',
      'DELETE /test-data',
      'DELETE /webhooks/{id}',
      'GET /events',
      'GET /listings',
      'GET /listings/{listing}',
      'GET /locations',
      'GET /locations/{id}/listings',
      'GET /reference/enums',
      'GET /requests',
      'GET /requests/{requestId}',
      'GET /webhooks',
      'GET /webhooks/{id}',
      'GET /webhooks/{id}/deliveries',
      'PATCH /listings/{listing}',
      'PATCH /webhooks/{id}',
      'POST /listings/bulk-upsert',
      'POST /listings/{externalReference}/status',
      'POST /webhooks',
      'POST /webhooks/{id}/resume',
      'POST /webhooks/{id}/rotate-secret',
      'POST /webhooks/{id}/test',
      'PUT /listings/{listing}',
    ]);
    assert.equal(JSON.stringify(committed).includes('/api/admin'), false);
  });

  test('every parameter and response is described; every write has a body with examples', () => {
    for (const [p, item] of Object.entries<Record<string, any>>(committed.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${p}`;
        assert.ok(op.operationId && op.summary && op.tags?.length, `${where}: operationId, summary, tags`);
        for (const param of op.parameters ?? []) {
          assert.ok(param.description, `${where}: parameter ${param.name} has no description`);
        }
        for (const status of ['400', '401', '403', '404', '429', '500', '503']) {
          assert.ok(op.responses[status], `${where}: ${status} not documented`);
          assert.match(op.responses[status].description, /`[A-Z_]+`: /, `${where}: ${status} lists no codes`);
        }
        if (method === 'put' || (method === 'post' && op.requestBody)) {
          const media = op.requestBody.content['application/json'];
          assert.ok(Object.keys(media.examples ?? {}).length > 0, `${where}: no request example`);
        }
      }
    }
  });

  test("lists test mode's codes only on the operations that can answer them", () => {
    // Issue 44: the error table is per status and kind, so every write listed TEST_MODE_ONLY and
    // TEST_LIMIT_REACHED. Only DELETE /test-data is refused to a live secret; only a PUT by
    // reference and a bulk upsert can create a test listing past the limit.
    const where: Record<string, string[]> = { TEST_MODE_ONLY: [], TEST_LIMIT_REACHED: [] };
    for (const item of Object.values<Record<string, any>>(committed.paths)) {
      for (const op of Object.values<any>(item)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          const listed = [...String(response.description).matchAll(/`([A-Z_]+)`: /g)].map((m) => m[1]!);
          const examples = Object.keys(response.content?.['application/json']?.examples ?? {});
          for (const code of Object.keys(where)) {
            assert.equal(
              listed.includes(code),
              examples.includes(code),
              `${op.operationId} ${status}: ${code} described and exemplified alike`,
            );
            if (listed.includes(code)) where[code]!.push(`${op.operationId} ${status}`);
          }
        }
      }
    }
    assert.deepEqual(where, {
      TEST_MODE_ONLY: ['wipeTestData 403'],
      TEST_LIMIT_REACHED: ['upsertListing 422', 'bulkUpsertListings 422'],
    });
  });

  test('lists every error code the service raises', () => {
    const codes = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts') && !file.includes(`${path.sep}admin${path.sep}`)) {
          const text = readFileSync(file, 'utf8');
          for (const m of text.matchAll(/problem\(\s*'([A-Z_]+)'/g)) codes.add(m[1]!);
        }
      }
    };
    walk(path.join(ROOT, 'src'));
    for (const [code, kind] of Object.entries(PROBLEMS)) if ('adminOnly' in kind) codes.delete(code);
    const documented = committed.components.schemas.ErrorResponse.properties.error.properties.code.enum;
    assert.ok(codes.size >= 10, `found only ${[...codes]}`);
    for (const code of codes) assert.ok(documented.includes(code), `${code} is raised but not documented`);
    assert.deepEqual(documented, Object.keys(ERROR_CODES));
  });
});

describe('the contract check of test responses', () => {
  const listing = '/api/external/v1/listings/3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c';
  const error = { error: { code: 'NOT_FOUND', message: 'No listing.', requestId: 'r1' } };

  test('accepts a documented status with a matching body', () => {
    assertContract('GET', listing, reply(404, error));
    assertContract('GET', '/api/external/v1/nowhere', reply(404, error));
    assertContract('GET', listing, reply(304, undefined));
  });

  test('fails on an undocumented status, an undocumented field, a wrong type or an unlisted code', () => {
    assert.throws(() => assertContract('GET', listing, reply(409, error)), /409 is not documented/);
    assert.throws(
      () => assertContract('GET', listing, reply(404, { error: { ...error.error, hint: 'x' } })),
      /does not match.*additional/,
    );
    assert.throws(
      () => assertContract('GET', listing, reply(404, { error: { ...error.error, requestId: 1 } })),
      /does not match/,
    );
    assert.throws(
      () => assertContract('GET', listing, reply(404, { error: { ...error.error, code: 'OOPS' } })),
      /does not match.*allowed values/,
    );
    assert.throws(() => assertContract('GET', listing, reply(304, { data: 1 })), /a body where/);
    assert.throws(() => assertContract('PATCH', '/api/external/v1/listings', reply(200, {})), /no operation/);
  });

  test('fails on a documented code under another status, or a write-only code on a read', () => {
    const withCode = (code: string) => ({ error: { ...error.error, code } });
    assert.throws(
      () => assertContract('GET', listing, reply(404, withCode('INVALID_QUERY'))),
      /code INVALID_QUERY is not one the document lists for this status \(NOT_FOUND\)/,
    );
    assert.throws(
      () => assertContract('GET', listing, reply(400, withCode('INVALID_JSON'))),
      /code INVALID_JSON is not one/,
    );
    assert.throws(
      () => assertContract('GET', '/api/external/v1/nowhere', reply(404, withCode('METHOD_NOT_ALLOWED'))),
      /code METHOD_NOT_ALLOWED is not one/,
    );
    assertContract('GET', listing, reply(400, withCode('INVALID_QUERY')));
  });
});
