import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failedWriteRetryMs, IMAGE_CHECK_LEASE_MS } from '../../src/domain/images/checker.js';
import {
  admit,
  freshHost,
  HOST_POLICY,
  HostLimits,
  hostKey,
  isIdle,
  pause,
  release,
  retryAfterMs,
} from '../../src/domain/images/host-limits.js';
import { failuresAfter, fraction, nextCheckAt, SCHEDULE } from '../../src/domain/images/schedule.js';

// The image checker's schedule and per-host limits (docs/images.md): pure functions of the time
// they are given, so the clock is the test's.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const T0 = new Date('2026-11-30T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const urls = (n: number) =>
  Array.from({ length: n }, (_, i) => `https://cdn${i % 97}.example/dealer/${i}/photo-${i * 7}.jpg`);

test('a pending image is due now', () => {
  const now = at(123);
  assert.equal(
    nextCheckAt({ url: 'https://a.example/1.jpg', state: 'pending', checkedAt: null, failures: 0 }, now),
    now,
  );
});

test('a good image comes back at its slot of the week: half a week to a week and a half later, then weekly', () => {
  for (const url of urls(200)) {
    const first = nextCheckAt({ url, state: 'ok', checkedAt: T0, failures: 0 }, T0);
    const wait = first.getTime() - T0.getTime();
    assert.ok(wait >= 3.5 * DAY && wait < 10.5 * DAY, `${url}: ${wait / DAY} days`);
    // Checked at its slot, or late by up to half a week: next time is the same slot a week on.
    for (const late of [0, 5 * MINUTE, DAY, 3 * DAY]) {
      const next = nextCheckAt(
        { url, state: 'ok', checkedAt: new Date(first.getTime() + late), failures: 0 },
        T0,
      );
      assert.equal(next.getTime() - first.getTime(), 7 * DAY, `${url} late by ${late}`);
    }
  }
});

test('an import of 100,000 images at one instant spreads evenly over the week after', () => {
  const perDay = new Array<number>(7).fill(0);
  const n = 100_000;
  for (const url of urls(n)) {
    const next = nextCheckAt({ url, state: 'ok', checkedAt: T0, failures: 0 }, T0).getTime();
    // Due times fall in [3.5, 10.5) days: seven consecutive days from day 3.5.
    perDay[Math.floor((next - T0.getTime() - 3.5 * DAY) / DAY)]! += 1;
  }
  for (const count of perDay) assert.ok(Math.abs(count - n / 7) < (n / 7) * 0.03, `${perDay}`);
});

test('a broken image backs off from 5 minutes, doubling, to a day, each URL stretched within ±10 %', () => {
  const url = 'https://dealer.example/img/42.jpg';
  const stretch = 0.9 + 0.2 * fraction(url, 'backoff');
  const expected = [5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440].map((m) =>
    Math.round(m * MINUTE * stretch),
  );
  expected.forEach((wait, i) => {
    const next = nextCheckAt({ url, state: 'unreachable', checkedAt: T0, failures: i + 1 }, T0);
    assert.equal(next.getTime() - T0.getTime(), wait, `failure ${i + 1}`);
  });
  // Every broken state backs off alike; a long streak stays at the cap.
  for (const state of ['not_an_image', 'too_small', 'too_large'] as const) {
    const next = nextCheckAt({ url, state, checkedAt: T0, failures: 1 }, T0);
    assert.equal(next.getTime() - T0.getTime(), expected[0]);
  }
  const streak = nextCheckAt({ url, state: 'unreachable', checkedAt: T0, failures: 10_000 }, T0);
  assert.equal(streak.getTime() - T0.getTime(), Math.round(DAY * stretch));
  // Different URLs of one host do not all come back in the same second.
  const waits = new Set(
    urls(50).map((u) =>
      nextCheckAt({ url: u, state: 'unreachable', checkedAt: T0, failures: 3 }, T0).getTime(),
    ),
  );
  assert.ok(waits.size > 45);
  for (const w of waits) assert.ok(w - T0.getTime() >= 18 * MINUTE && w - T0.getTime() <= 22 * MINUTE);
});

test('failures in a row: ok starts over, pending leaves the count alone, anything else adds one', () => {
  assert.equal(failuresAfter(4, 'ok'), 0);
  assert.equal(failuresAfter(4, 'pending'), 4);
  assert.equal(failuresAfter(4, 'unreachable'), 5);
  assert.equal(failuresAfter(0, 'too_small'), 1);
  assert.equal(SCHEDULE.recheckMs, 7 * DAY);
});

test('the sizing the schedule states: 15 million images a week is about 25 checks a second', () => {
  const perSecond = 15_000_000 / (SCHEDULE.recheckMs / 1000);
  assert.ok(perSecond > 24.5 && perSecond < 25, String(perSecond));
});

test('a host admits its burst at once, then one fetch per 1/rate seconds', () => {
  assert.deepEqual(HOST_POLICY, { maxInFlight: 4, ratePerSecond: 8, burst: 8 });
  const policy = { maxInFlight: 100, ratePerSecond: 8, burst: 8 };
  let state = freshHost(0, policy);
  for (let i = 0; i < 8; i++) {
    const answer = admit(state, 0, policy);
    assert.equal(answer.admitted, true, `fetch ${i + 1}`);
    state = answer.state;
  }
  const ninth = admit(state, 0, policy);
  assert.deepEqual([ninth.admitted, !ninth.admitted && ninth.retryInMs], [false, 125]);
  assert.equal(admit(ninth.state, 124, policy).admitted, false);
  assert.equal(admit(ninth.state, 125, policy).admitted, true);
  // A clock that goes back adds no tokens.
  assert.equal(admit(ninth.state, -5_000, policy).admitted, false);
});

test('a host never has more fetches in flight than its limit; a finish frees a slot', () => {
  const policy = { maxInFlight: 2, ratePerSecond: 1000, burst: 1000 };
  let state = freshHost(0, policy);
  for (let i = 0; i < 2; i++) state = (admit(state, 0, policy) as { state: typeof state }).state;
  const full = admit(state, 0, policy);
  assert.deepEqual([full.admitted, !full.admitted && full.retryInMs], [false, null]);
  state = release(full.state);
  assert.equal(admit(state, 0, policy).admitted, true);
  assert.equal(release(freshHost(0)).inFlight, 0);
});

test('a host that asked us to wait gets nothing until then; Retry-After is read and capped at an hour', () => {
  const paused = pause(freshHost(0), 30_000);
  const answer = admit(paused, 10_000);
  assert.deepEqual([answer.admitted, !answer.admitted && answer.retryInMs], [false, 20_000]);
  assert.equal(admit(paused, 30_000).admitted, true);
  assert.equal(pause(paused, 5_000).pausedUntil, 30_000, 'a shorter pause does not cut a longer one');

  const now = Date.parse('2026-11-30T12:00:00Z');
  assert.equal(retryAfterMs('30', now), 30_000);
  assert.equal(retryAfterMs(' 0 ', now), 0);
  assert.equal(retryAfterMs('Mon, 30 Nov 2026 12:02:00 GMT', now), 120_000);
  assert.equal(retryAfterMs('Mon, 30 Nov 2026 11:00:00 GMT', now), 0);
  assert.equal(retryAfterMs('86400', now), 60 * MINUTE);
  for (const bad of [null, undefined, '', 'soon', '-5', '1.5'])
    assert.equal(retryAfterMs(bad, now), null, String(bad));
});

test('HostLimits: hosts counted apart by host and port, own policies, idle hosts forgotten', () => {
  assert.equal(hostKey('https://CDN.Example.com/a.jpg'), 'cdn.example.com');
  assert.equal(hostKey('https://cdn.example.com:443/a.jpg'), 'cdn.example.com');
  assert.equal(hostKey('http://cdn.example.com:8080/a.jpg'), 'cdn.example.com:8080');
  assert.equal(hostKey('not a url'), 'not a url');

  const limits = new HostLimits(
    { maxInFlight: 1, ratePerSecond: 10, burst: 10 },
    { 'big.example': { maxInFlight: 3 } },
  );
  assert.deepEqual(limits.tryStart('https://small.example/1.jpg', 0), { admitted: true });
  assert.deepEqual(limits.tryStart('https://small.example/2.jpg', 0), { admitted: false, retryInMs: null });
  assert.deepEqual(limits.tryStart('https://other.example/1.jpg', 0), { admitted: true });
  for (let i = 0; i < 3; i++) assert.equal(limits.tryStart(`https://BIG.example/${i}.jpg`, 0).admitted, true);
  assert.equal(limits.tryStart('https://big.example/4.jpg', 0).admitted, false);
  assert.equal(limits.inFlight('https://big.example/'), 3);

  limits.finish('https://small.example/1.jpg');
  assert.equal(limits.tryStart('https://small.example/2.jpg', 0).admitted, true);
  limits.finish('https://small.example/2.jpg');
  limits.finish('https://other.example/1.jpg');
  limits.pause('https://slow.example/a.jpg', 0, 5_000);
  assert.deepEqual(limits.tryStart('https://slow.example/b.jpg', 1_000), {
    admitted: false,
    retryInMs: 4_000,
  });
  // After a second every bucket is full again: only big (3 in flight) and slow (paused) are held.
  assert.equal(limits.sweep(1_000), 2);
  assert.equal(limits.sweep(5_000), 1);
  assert.equal(isIdle(freshHost(0), 0), true);
});

test('a result that failed to be written: due again after 5 s, doubling, never later than a lease', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 50].map(failedWriteRetryMs), [
    5_000,
    10_000,
    20_000,
    40_000,
    IMAGE_CHECK_LEASE_MS,
    IMAGE_CHECK_LEASE_MS,
  ]);
});
