import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { z } from 'zod';
import { cursorCodec, filterParts, fingerprint } from '../../src/domain/cursor.js';
import {
  notFound,
  PROBLEMS,
  type ProblemCode,
  ProblemError,
  problem,
  profileForbidden,
  zodIssues,
} from '../../src/domain/errors.js';
import { ifMatchHolds, listingEtag } from '../../src/domain/etag.js';
import { applyMergePatch } from '../../src/domain/merge-patch.js';
import { makeSlug } from '../../src/domain/slug.js';
import { closestName, nameDistance, unknownNameMessage } from '../../src/domain/suggest.js';
import { KEEP_CHARS, keepable, keepableOrNull, unstorableAt } from '../../src/domain/text.js';
import { declaredKeys, unknownKeyIssues } from '../../src/domain/unknown-keys.js';

// Small rules of the domain: names and did-you-mean, slugs, text, the error table against
// docs/api.md, cursors' malformed forms, merge patch and ETags beyond the RFC's examples.

test('nameDistance: a swap of neighbours is one edit; case, _ and - do not count', () => {
  assert.equal(nameDistance('milage', 'mileage'), 1);
  assert.equal(nameDistance('stauts', 'status'), 1);
  assert.equal(nameDistance('dealer_profile_id', 'dealerProfileId'), 0);
  assert.equal(nameDistance('PRICE', 'price'), 0);
  assert.equal(nameDistance('', 'abc'), 3);
  assert.equal(nameDistance('abc', 'xyz'), 3);
});

test('closestName: at most a third of the longer name may differ, at least one edit', () => {
  assert.equal(closestName('colour', ['color']), 'color');
  assert.equal(closestName('xyz', ['status', 'page']), undefined);
  assert.equal(closestName('pag', ['page']), 'page', 'one edit is always allowed');
  assert.equal(closestName('pgae', ['page']), 'page');
  assert.equal(closestName('mileage12', ['mileage']), 'mileage', '9 characters allow 3 edits');
  assert.equal(closestName('mileage1234', ['mileage']), undefined, '11 characters allow 3, not 4');
});

test('closestName: a tie goes to the earlier candidate; a closer later one still wins', () => {
  assert.equal(closestName('limt', ['limit', 'lint']), 'limit');
  assert.equal(closestName('limt', ['lint', 'limit']), 'lint');
  assert.equal(closestName('pagesize', ['page', 'pageSize']), 'pageSize');
});

test('closestName: a name longer than 64 characters is no typo of a known one', () => {
  assert.equal(closestName(`${'a'.repeat(65)}`, ['a'.repeat(64)]), undefined);
  assert.equal(closestName(`${'a'.repeat(63)}b`, ['a'.repeat(64)]), 'a'.repeat(64));
});

test('unknownNameMessage: the kind named, a guess in backticks only when plausible', () => {
  assert.equal(
    unknownNameMessage('parameter', 'stauts', ['status']),
    'is not a known parameter; did you mean `status`?',
  );
  assert.equal(unknownNameMessage('field', 'zzz', ['status']), 'is not a known field');
});

test('unknownKeyIssues: each unknown name at its path with the kind’s code; known names pass', () => {
  assert.deepEqual(unknownKeyIssues({ page: 1, stauts: 'x' }, ['page', 'status'], 'parameter', ['query']), [
    {
      path: 'query.stauts',
      message: 'is not a known parameter; did you mean `status`?',
      code: 'unknown_parameter',
    },
  ]);
  assert.deepEqual(unknownKeyIssues({ a: 1 }, [], 'field', ['items', 0]), [
    { path: 'items.0.a', message: 'is not a known field', code: 'unknown_field' },
  ]);
});

test('declaredKeys: an object’s names through optional, nullable and pipe; none for a string', () => {
  const shape = z.object({ a: z.string(), b: z.number() });
  assert.deepEqual(declaredKeys(shape), ['a', 'b']);
  assert.deepEqual(declaredKeys(shape.optional().nullable()), ['a', 'b']);
  assert.deepEqual(declaredKeys(shape.transform((v) => v)), ['a', 'b']);
  assert.equal(declaredKeys(z.string()), undefined);
});

test('slugs: brand, model, variant and year, empty parts skipped, then an 8-character suffix', () => {
  const slug = makeSlug(['Volkswagen', null, '', undefined, 'Golf GTI', 2019]);
  assert.match(slug, /^volkswagen-golf-gti-2019-[a-z0-9]{8}$/);
});

test('slugs: two listings with the same words get different slugs', () => {
  const slugs = new Set(Array.from({ length: 300 }, () => makeSlug(['Skoda', 'Octavia'])));
  assert.equal(slugs.size, 300);
});

test('slugs: the words are cut to 80 characters without a trailing hyphen', () => {
  const slug = makeSlug([`${'a'.repeat(79)} bcd`]);
  const words = slug.slice(0, -9);
  assert.equal(words, 'a'.repeat(79));
  assert.match(slug, /^a{79}-[a-z0-9]{8}$/);
});

test('slugs: ligatures and compatibility forms become ASCII letters, other scripts nothing', () => {
  assert.match(makeSlug(['ﬁat Ⅱ']), /^fiat-ii-[a-z0-9]{8}$/);
  assert.match(makeSlug(['日本']), /^listing-[a-z0-9]{8}$/);
});

test('keepable: at the limit nothing is cut; one more and the length is said', () => {
  assert.equal(keepable('x'.repeat(KEEP_CHARS)), 'x'.repeat(KEEP_CHARS));
  assert.equal(keepable('x'.repeat(KEEP_CHARS + 1)), `${'x'.repeat(KEEP_CHARS)}… (1001 characters)`);
});

test('keepableOrNull: absent stays null; present is made keepable', () => {
  assert.equal(keepableOrNull(null), null);
  assert.equal(keepableOrNull(undefined), null);
  assert.equal(keepableOrNull(''), '');
  assert.equal(keepableOrNull('a\u0000', 10), 'a\uFFFD');
});

test('unstorableAt: the first unstorable character is the one named', () => {
  assert.deepEqual(unstorableAt('ok\udc00\u0000'), { index: 2, what: 'an unpaired surrogate U+DC00' });
  assert.equal(unstorableAt('😀'), null, 'a pair is one character, not two lone halves');
});

test("docs/api.md's error table and the code table agree, code by code and status by status", () => {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const documented = new Map<string, number>();
  for (const row of doc.matchAll(/^\| (\d{3}) \| (.+?) \|/gm)) {
    for (const code of row[2]!.matchAll(/`([A-Z_]+)`/g)) documented.set(code[1]!, Number(row[1]));
  }
  const partner = (
    Object.entries(PROBLEMS) as [ProblemCode, { status: number; adminOnly?: boolean }][]
  ).filter(([, kind]) => !kind.adminOnly);
  for (const [code, kind] of partner) assert.equal(documented.get(code), kind.status, code);
  for (const code of documented.keys())
    assert.ok(code in PROBLEMS, `${code} is documented but not in the table`);
});

test('a problem carries headers to send, empty unless set; notFound and profileForbidden are 404 and 403', () => {
  const error = problem('RATE_LIMITED', 'slow down');
  assert.deepEqual(error.headers, {});
  assert.ok(error instanceof Error && error instanceof ProblemError);
  assert.equal(error.name, 'ProblemError');
  assert.deepEqual([notFound('x').status, notFound('x').code], [404, 'NOT_FOUND']);
  assert.deepEqual([profileForbidden('x').status, profileForbidden('x').code], [403, 'PROFILE_FORBIDDEN']);
});

test('zodIssues: paths joined with dots under a prefix, (root) for the value itself, our own codes kept', () => {
  const schema = z.object({
    items: z.array(z.object({ price: z.number() })),
    name: z.string().refine(() => false, { message: 'taken', params: { code: 'name_taken' } }),
  });
  const parsed = schema.safeParse({ items: [{ price: 'x' }], name: 'a' });
  assert.deepEqual(
    zodIssues(parsed.error!, ['body']).map((i) => [i.path, i.code]),
    [
      ['body.items.0.price', 'invalid_type'],
      ['body.name', 'name_taken'],
    ],
  );
  assert.equal(zodIssues(z.string().safeParse(5).error!)[0]?.path, '(root)');
});

const codec = cursorCodec('c'.repeat(32));
const filters = fingerprint({ status: 'active' });
const malformed = (cursor: string) =>
  assert.throws(
    () => codec.decode(cursor, filters),
    (error: unknown) =>
      error instanceof ProblemError &&
      error.code === 'INVALID_QUERY' &&
      error.message === 'cursor: is malformed; pass nextCursor exactly as received' &&
      error.issues?.[0]?.code === 'invalid_cursor' &&
      error.issues?.[0]?.path === 'query.cursor',
  );

test('a cursor with a third part, no signature, or a signature of the wrong length is malformed', () => {
  const cursor = codec.encode(null, filters);
  malformed(`${cursor}.x`);
  malformed(cursor.split('.')[0]!);
  malformed(`${cursor}A`);
  malformed('');
});

test('a cursor issued with one filter fewer names that filter; one filter differing says "it"', () => {
  const issued = { status: 'active' };
  const now = { status: 'active', mine: true };
  const cursor = codec.encode(null, fingerprint(issued), filterParts(issued));
  assert.throws(
    () => codec.decode(cursor, fingerprint(now), filterParts(now)),
    /cursor: was issued with a different mine; send it as in the request/,
  );
  const parents = { parentDealerId: 'x' };
  const other = { parentDealerId: 'y' };
  assert.throws(
    () =>
      codec.decode(
        codec.encode(null, fingerprint(parents), filterParts(parents)),
        fingerprint(other),
        filterParts(other),
      ),
    /a different parentDealerId \(or parentId, companyId\); send it/,
  );
});

test('filterParts: a 4-character hash per filter, sorted by name, equal for equal values', () => {
  const parts = filterParts({ status: 'sold', dealerIds: ['a', 'b'] });
  assert.deepEqual(Object.keys(parts), ['dealerIds', 'status']);
  assert.ok(Object.values(parts).every((h) => /^[A-Za-z0-9_-]{4}$/.test(h)));
  assert.equal(filterParts({ status: 'sold' }).status, parts.status);
  assert.notEqual(
    filterParts({ dealerIds: ['b', 'a'] }).dealerIds,
    parts.dealerIds,
    'an id list keeps its order',
  );
});

test('merge patch: a patch that is not an object replaces the target whole', () => {
  assert.deepEqual(applyMergePatch({ a: 1 }, ['x']), ['x']);
  assert.equal(applyMergePatch({ a: 1 }, 'text'), 'text');
  assert.equal(applyMergePatch({ a: 1 }, null), null);
});

test('merge patch: nested members merge and nulls remove at any depth; the target is not changed', () => {
  const target = { location: { city: 'Gent', postalCode: '9000' }, price: 1 };
  const result = applyMergePatch(target, { location: { postalCode: null, province: 'OVL' } });
  assert.deepEqual(result, { location: { city: 'Gent', province: 'OVL' }, price: 1 });
  assert.deepEqual(target, { location: { city: 'Gent', postalCode: '9000' }, price: 1 });
});

test('ETags: the same JSON, the same tag; any difference, another one', () => {
  assert.equal(listingEtag('{"id":"x","price":1}'), listingEtag('{"id":"x","price":1}'));
  assert.notEqual(listingEtag('{"id":"x","price":1}'), listingEtag('{"price":1,"id":"x"}'));
});

test('If-Match: tags are compared exactly, spaces around list members ignored', () => {
  const tag = listingEtag('{"id":"x"}');
  assert.ok(ifMatchHolds(`  ${tag}  ,"b"`, tag));
  assert.ok(!ifMatchHolds(tag.slice(1, -1), tag), 'an unquoted tag is another tag');
  assert.ok(!ifMatchHolds(tag.toLowerCase() === tag ? `"X${tag.slice(1)}` : tag.toLowerCase(), tag));
});
