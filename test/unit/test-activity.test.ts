import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testActivityOf } from '../../src/domain/request-records/test-use.js';

// What a test request shows its partner tried (docs/test-mode.md, "What the operator sees").

test('each route and method is the activity the partner page shows', () => {
  const cases: [string, string, number, boolean, string | undefined][] = [
    ['PUT', '/listings/{listing}', 201, false, 'write'],
    ['PATCH', '/listings/{listing}', 200, false, 'write'],
    ['DELETE', '/listings/{listing}', 204, false, 'write'],
    ['POST', '/listings/bulk-upsert', 207, false, 'write'],
    ['POST', '/listings/{externalReference}/status', 200, false, 'write'],
    ['GET', '/listings', 200, false, 'read'],
    ['GET', '/listings/{listing}', 304, false, 'read'],
    ['GET', '/locations', 200, false, 'read'],
    ['GET', '/listings', 200, true, 'sync'],
    ['GET', '/locations/{id}/listings', 200, true, 'sync'],
    ['HEAD', '/listings', 200, true, 'sync'],
    ['GET', '/events', 200, true, 'events'],
    // Refused requests, and what has pages of its own, show nothing tried.
    ['PUT', '/listings/{listing}', 422, false, undefined],
    ['GET', '/listings', 400, true, undefined],
    ['POST', '/webhooks', 201, false, undefined],
    ['GET', '/requests', 200, false, undefined],
    ['DELETE', '/test-data', 200, false, undefined],
    ['GET', '/reference/enums', 200, false, undefined],
  ];
  for (const [method, route, status, cursor, expected] of cases) {
    assert.equal(testActivityOf({ method, route, status, cursor }), expected, `${method} ${route} ${status}`);
  }
});
