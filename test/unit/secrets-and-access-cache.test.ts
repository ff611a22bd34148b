import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { accessCache } from '../../src/domain/access-cache.js';
import { dealerLookup } from '../../src/domain/dealer-lookup.js';
import { generateSecret, hashSecret, isWellFormedSecret, safeEqual } from '../../src/domain/secrets.js';

// Partner secrets (fc_, 40 random base62 characters, a CRC32 checksum) and the per-instance cache
// of what a request needs, whose correctness rests on forgetting (src/domain/access-cache.ts).

test('a new secret is fc_, 46 base62 characters, well formed, and new each time', () => {
  const secret = generateSecret();
  assert.match(secret, /^fc_[0-9A-Za-z]{46}$/);
  assert.ok(isWellFormedSecret(secret));
  assert.notEqual(generateSecret(), secret);
});

test('a mistyped secret fails its checksum: one character changed anywhere', () => {
  const secret = generateSecret();
  for (const at of [3, 20, 42, 48]) {
    const c = secret[at]!;
    const typo = `${secret.slice(0, at)}${c === 'a' ? 'b' : 'a'}${secret.slice(at + 1)}`;
    assert.equal(isWellFormedSecret(typo), false, `position ${at}`);
  }
});

test('a secret of another shape is not well formed', () => {
  const secret = generateSecret();
  for (const bad of [
    secret.slice(1),
    `FC_${secret.slice(3)}`,
    `${secret}a`,
    secret.slice(0, -1),
    `${secret.slice(0, -1)}-`,
    '',
  ]) {
    assert.equal(isWellFormedSecret(bad), false, bad);
  }
});

test('hashSecret is the SHA-256 of the secret’s UTF-8', () => {
  assert.deepEqual(hashSecret('fc_x'), createHash('sha256').update('fc_x').digest());
  assert.equal(hashSecret('fc_x').length, 32);
});

test('safeEqual: equal strings only, whatever their lengths', () => {
  assert.equal(safeEqual('token-1', 'token-1'), true);
  assert.equal(safeEqual('token-1', 'token-2'), false);
  assert.equal(safeEqual('short', 'a much longer string'), false);
  assert.equal(safeEqual('', ''), true);
});

const counting = <T>(value: T) => {
  const load = async () => {
    load.calls++;
    return value;
  };
  load.calls = 0;
  return load;
};

test('the access cache keeps nothing while changes are not heard', async () => {
  const cache = accessCache();
  const load = counting('partner');
  await cache.through('k', load);
  await cache.through('k', load);
  assert.equal(load.calls, 2);
});

test('while changes are heard a value is kept until forget()', async () => {
  const cache = accessCache();
  cache.setLive(true);
  const load = counting('partner');
  assert.equal(await cache.through('k', load), 'partner');
  assert.equal(await cache.through('k', load), 'partner');
  assert.equal(load.calls, 1);
  cache.forget();
  await cache.through('k', load);
  assert.equal(load.calls, 2);
});

test('a load that began before a forget is not kept: it may have read the old state', async () => {
  const cache = accessCache();
  cache.setLive(true);
  let release: (v: string) => void = () => {};
  const slow = () => new Promise<string>((resolve) => (release = resolve));
  const pending = cache.through('k', slow);
  cache.forget();
  release('old');
  assert.equal(await pending, 'old');
  const load = counting('new');
  assert.equal(await cache.through('k', load), 'new');
  assert.equal(load.calls, 1);
});

test('a value keep() refuses is returned but not kept', async () => {
  const cache = accessCache();
  cache.setLive(true);
  const load = counting<string | null>(null);
  await cache.through('k', load, (v) => v !== null);
  await cache.through('k', load, (v) => v !== null);
  assert.equal(load.calls, 2);
});

test('an entry older than the TTL is loaded again', async () => {
  const cache = accessCache({ ttlMs: 0 });
  cache.setLive(true);
  const load = counting('v');
  await cache.through('k', load);
  await cache.through('k', load);
  assert.equal(load.calls, 2);
});

test('past maxEntries the cache starts empty again; keys are kept apart', async () => {
  const cache = accessCache({ maxEntries: 2 });
  cache.setLive(true);
  const a = counting('a');
  const b = counting('b');
  const c = counting('c');
  await cache.through('a', a);
  await cache.through('b', b);
  assert.equal(await cache.through('b', b), 'b');
  await cache.through('c', c); // full: everything dropped, then c kept
  await cache.through('a', a);
  await cache.through('c', c);
  assert.deepEqual([a.calls, b.calls, c.calls], [2, 1, 1]);
});

test('turning listening on or off forgets what was kept', async () => {
  const cache = accessCache();
  cache.setLive(true);
  const load = counting('v');
  await cache.through('k', load);
  cache.setLive(true);
  await cache.through('k', load);
  assert.equal(load.calls, 2);
});

/** A batch loader over a fixed table that records which keys each call asked for. */
const batchLoader = (table: Record<string, string>) => {
  const asked: string[][] = [];
  const load = async (missing: string[]) => {
    asked.push(missing);
    return new Map(missing.filter((k) => k in table).map((k) => [k, table[k]!]));
  };
  return { load, asked };
};

test('throughMany asks only for the keys not kept, once each, and keeps what it found', async () => {
  const cache = accessCache();
  cache.setLive(true);
  const { load, asked } = batchLoader({ a: '1', b: '2', c: '3' });
  assert.deepEqual(
    [...(await cache.throughMany('p:', ['a', 'b', 'a', 'x'], load))],
    [
      ['a', '1'],
      ['b', '2'],
    ],
  );
  const second = await cache.throughMany('p:', ['b', 'c', 'x'], load);
  assert.deepEqual(Object.fromEntries(second), { b: '2', c: '3' });
  // "x" names nothing: asked again each time (something created since is found at once).
  assert.deepEqual(asked, [
    ['a', 'b', 'x'],
    ['c', 'x'],
  ]);
  // Kinds are kept apart from each other and from through()'s keys...
  await cache.throughMany('q:', ['a'], load);
  assert.deepEqual(asked.at(-1), ['a']);
  assert.equal(await cache.through('a', async () => 'through'), 'through');
  // ...and bounded apart: a kind filling up does not push out another's entries.
  const small = accessCache({ maxEntries: 2 });
  small.setLive(true);
  const secrets = counting('secret');
  await small.through('s', secrets);
  await small.throughMany('d', ['a', 'b', 'c'], load);
  await small.through('s', secrets);
  assert.equal(secrets.calls, 1);
});

test('throughMany keeps nothing loaded across a forget, nor while changes are not heard', async () => {
  const cache = accessCache();
  const { load, asked } = batchLoader({ a: '1' });
  await cache.throughMany('p:', ['a'], load);
  await cache.throughMany('p:', ['a'], load);
  assert.equal(asked.length, 2, 'not live: nothing kept');

  cache.setLive(true);
  let release: () => void = () => {};
  const slow = async (missing: string[]) => {
    await new Promise<void>((resolve) => (release = resolve));
    return load(missing);
  };
  const pending = cache.throughMany('p:', ['a'], slow);
  cache.forget();
  release();
  assert.deepEqual(Object.fromEntries(await pending), { a: '1' });
  await cache.throughMany('p:', ['a'], load);
  assert.equal(asked.length, 4, 'the load that raced the forget was not kept');
  await cache.throughMany('p:', ['a'], load);
  assert.equal(asked.length, 4, 'the next one was');
  assert.deepEqual(Object.fromEntries(await cache.throughMany('p:', [], load)), {});
  assert.equal(asked.length, 4, 'no keys: nothing asked');
});

test('dealerLookup asks the store once for each id and code that names a profile, in any letter case', async () => {
  const cache = accessCache();
  cache.setLive(true);
  const asked: string[][] = [];
  const profiles = new Map([['g1-a', 'id-1']]);
  const lookup = dealerLookup(
    {
      async existing(ids) {
        asked.push(['existing', ...ids]);
        return new Set(ids.filter((id) => id === 'id-1'));
      },
      async idsByCodes(codes) {
        asked.push(['codes', ...codes]);
        return new Map(codes.flatMap((c) => (profiles.has(c) ? [[c, profiles.get(c)!] as const] : [])));
      },
    },
    cache,
  );
  assert.deepEqual([...(await lookup.idsByCodes(['G1-A', 'g1-a', 'none']))], [['g1-a', 'id-1']]);
  assert.deepEqual([...(await lookup.idsByCodes(['G1-a']))], [['g1-a', 'id-1']]);
  assert.deepEqual([...(await lookup.existing(['id-1', 'id-x']))], ['id-1']);
  assert.deepEqual([...(await lookup.existing(['id-1']))], ['id-1']);
  assert.deepEqual(asked, [
    ['codes', 'g1-a', 'none'],
    ['existing', 'id-1', 'id-x'],
  ]);
  cache.forget();
  await lookup.idsByCodes(['g1-a']);
  assert.deepEqual(asked.at(-1), ['codes', 'g1-a'], 'forgotten: asked again');
});
