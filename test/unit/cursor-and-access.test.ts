import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Access, assertInScope, inScope, narrow } from '../../src/domain/access.js';
import { cursorCodec, filterParts, fingerprint } from '../../src/domain/cursor.js';
import { ProblemError } from '../../src/domain/errors.js';

// Sync cursors and access scopes: pure rules, no service.

const codec = cursorCodec('k'.repeat(32));
const filters = fingerprint({ status: 'active', mine: false });
const position = { ts: '2026-11-22T10:00:00.123456Z', id: '0a0a0a0a-0000-4000-8000-000000000001' };

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ProblemError);
    return `${error.status} ${error.code}: ${error.message}`;
  }
  assert.fail('not refused');
};

test('a cursor round-trips its position, and the start of the list is a cursor too', () => {
  assert.deepEqual(codec.decode(codec.encode(position, filters), filters), position);
  assert.equal(codec.decode(codec.encode(null, filters), filters), null);
});

test('a cursor that was altered, forged, truncated or issued for other filters is refused, saying which', () => {
  const cursor = codec.encode(position, filters);
  const [body, mac] = cursor.split('.') as [string, string];
  assert.match(
    refusal(() => codec.decode(`${body}x.${mac}`, filters)),
    /^400 INVALID_QUERY: cursor: is not one this service issued/,
  );
  assert.match(
    refusal(() => cursorCodec('o'.repeat(32)).decode(cursor, filters)),
    /is not one this service issued/,
  );
  assert.match(
    refusal(() => codec.decode(cursor.slice(0, 20), filters)),
    /is malformed/,
  );
  assert.match(
    refusal(() => codec.decode(cursor, fingerprint({ status: 'sold', mine: false }))),
    /was issued for other filters/,
  );
});

test('a cursor sent with other filters names the filters that differ', () => {
  const issued = { context: '', status: 'active', mine: false, dealerIds: [] };
  const cursor = codec.encode(position, fingerprint(issued), filterParts(issued));
  const now = { ...issued, status: 'all', dealerIds: ['x'] };
  assert.match(
    refusal(() => codec.decode(cursor, fingerprint(now), filterParts(now))),
    /^400 INVALID_QUERY: cursor: was issued with a different dealerId \(or locationId, profileId\), status; send them as in the request/,
  );
  // A cursor from before filters were named (no parts) still gets the general answer.
  const old = codec.encode(position, fingerprint(issued));
  assert.match(
    refusal(() => codec.decode(old, fingerprint(now), filterParts(now))),
    /was issued for other filters/,
  );
});

test('a fingerprint does not depend on the order of the filters', () => {
  assert.equal(fingerprint({ a: 1, b: [2] }), fingerprint({ b: [2], a: 1 }));
  assert.notEqual(fingerprint({ a: 1 }), fingerprint({ a: 2 }));
});

test('scopes: a restricted partner sees its profiles only; filters narrow, never widen', () => {
  const restricted = { scope: 'restricted' as const, rootProfileIds: ['g'], profileIds: ['g', 'l1', 'l2'] };
  const global: Access = { scope: 'global', rootProfileIds: [], profileIds: [] };
  assert.ok(inScope(restricted, 'l1') && !inScope(restricted, 'other') && inScope(global, 'anything'));
  assert.match(
    refusal(() => assertInScope(restricted, ['l1', 'other'])),
    /^403 PROFILE_FORBIDDEN: Dealer profile other/,
  );
  assert.deepEqual(narrow(restricted, [['l1', 'other']]), ['l1']);
  assert.deepEqual(narrow(restricted, []), ['g', 'l1', 'l2']);
  assert.equal(narrow(global, []), null);
  assert.deepEqual(narrow(global, [['x', 'y'], ['y']]), ['y']);
});
