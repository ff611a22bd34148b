import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ifMatchHolds, listingEtag, preconditionFailed } from '../../src/domain/etag.js';
import { applyMergePatch } from '../../src/domain/merge-patch.js';

// JSON Merge Patch and If-Match: pure rules, no service.

test('applyMergePatch: the examples of RFC 7396, Appendix A', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, result] of cases) {
    const before = JSON.stringify(patch);
    assert.deepEqual(applyMergePatch(target, patch), result, `${JSON.stringify(target)} + ${before}`);
    assert.equal(JSON.stringify(patch), before, 'the patch is not changed');
  }
});

test('If-Match: absent holds; * needs the listing; tags compare strongly; a list passes on any', () => {
  const current = listingEtag('{"id":"x"}');
  assert.match(current, /^"[A-Za-z0-9_-]{27}"$/);
  assert.notEqual(listingEtag('{"id":"y"}'), current);
  assert.ok(ifMatchHolds(undefined, undefined));
  assert.ok(ifMatchHolds('  ', current));
  assert.ok(ifMatchHolds('*', current));
  assert.ok(!ifMatchHolds('*', undefined));
  assert.ok(ifMatchHolds(current, current));
  assert.ok(ifMatchHolds(`"other", ${current}`, current));
  assert.ok(!ifMatchHolds(`W/${current}`, current), 'a weak tag never matches a write');
  assert.ok(!ifMatchHolds(current, undefined));
  assert.ok(!ifMatchHolds('"stale"', current));
});

test('a failed If-Match is 412 carrying the current ETag, when there is one', () => {
  const current = listingEtag('{}');
  const stale = preconditionFailed('REF-1', current);
  assert.deepEqual([stale.status, stale.code, stale.headers.ETag], [412, 'PRECONDITION_FAILED', current]);
  assert.match(stale.message, /REF-1.*current ETag/);
  const missing = preconditionFailed('REF-2', undefined);
  assert.equal(missing.headers.ETag, undefined);
  assert.match(missing.message, /no listing with that reference/);
});
