import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs, type LoopSettings, loop, SATURATED } from '../../src/background/loop.js';

// The one loop primitive of background work (background/loop.ts): passes one at a time, the wait
// between them, back-off after failures, saturation, wake() and stop(). The timers are the test's
// (node:test's mock timers); the passes are promises the test settles.

/** Lets promise callbacks and timers' callbacks that were due run. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A pass the test ends by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function counting(settings: Partial<LoopSettings> & Pick<LoopSettings, 'pass'>) {
  const waits: number[] = [];
  const looping = loop({
    name: 'test',
    everyMs: 1000,
    backoff: { firstMs: 100, maxMs: 1000 },
    random: () => 0,
    failed: (_error, { retryInMs }) => waits.push(retryInMs),
    ...settings,
  });
  return { looping, waits };
}

test('back-off: doubling from the first wait up to the cap, less at most a quarter of jitter', () => {
  const none = () => 0;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 40].map((n) => backoffMs(n, 100, 1000, none)),
    [100, 200, 400, 800, 1000, 1000, 1000],
  );
  assert.equal(
    backoffMs(3, 100, 1000, () => 1),
    300,
    'the most jitter takes a quarter off',
  );
  assert.equal(
    backoffMs(3, 100, 1000, () => 0.5),
    350,
  );
  for (let i = 0; i < 100; i++) {
    const wait = backoffMs(5, 100, 1000, Math.random);
    assert.ok(wait >= 750 && wait <= 1000, `${wait}`);
  }
});

test('a failing loop waits longer after each failure, and the first success resets the wait', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let failing = true;
  let passes = 0;
  const { looping, waits } = counting({
    async pass() {
      passes++;
      if (failing) throw new Error('down');
    },
  });
  await looping.start();
  assert.equal(passes, 1, 'the first pass runs at start');
  for (const wait of [100, 200, 400, 800, 1000, 1000]) {
    t.mock.timers.tick(wait - 1);
    await settle();
    const before: number = passes;
    t.mock.timers.tick(1);
    await settle();
    assert.equal(passes, before + 1, `the next pass ${wait} ms later`);
  }
  assert.deepEqual(waits, [100, 200, 400, 800, 1000, 1000, 1000]);
  assert.equal(looping.stats().failingInARow, 7);
  failing = false;
  t.mock.timers.tick(1000);
  await settle();
  assert.equal(looping.stats().failingInARow, 0);
  // Succeeding: the interval again, not the back-off.
  const before: number = passes;
  t.mock.timers.tick(999);
  await settle();
  assert.equal(passes, before);
  t.mock.timers.tick(1);
  await settle();
  assert.equal(passes, before + 1);
  failing = true;
  t.mock.timers.tick(1000);
  await settle();
  assert.deepEqual(waits.slice(-1), [100], 'the back-off starts over after a success');
  await looping.stop();
});

test('stop waits for the pass under way, which sees it stopping, and starts no other', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const gate = deferred();
  const seen: boolean[] = [];
  let passes = 0;
  let afterLast = 0;
  const { looping } = counting({
    everyMs: 10,
    async pass(stopping) {
      passes++;
      seen.push(stopping());
      if (passes === 2) {
        await gate.promise;
        seen.push(stopping());
      }
    },
    async afterLast() {
      afterLast = passes;
    },
  });
  await looping.start();
  t.mock.timers.tick(10);
  await settle();
  assert.equal(passes, 2, 'the second pass is under way');
  let stopped = false;
  const stopping = looping.stop().then(() => {
    stopped = true;
  });
  await settle();
  assert.equal(stopped, false, 'stop waits for the pass');
  gate.resolve();
  await stopping;
  assert.deepEqual(seen, [false, false, true], 'the pass saw the stop');
  assert.equal(afterLast, 2, 'afterLast runs once the last pass is over');
  t.mock.timers.tick(60_000);
  await settle();
  assert.equal(passes, 2, 'no pass after stop');
  await looping.wake();
  assert.equal(passes, 2, 'a stopped loop is not woken');
});

test('a saturated pass is followed at once by the next; the interval only once one is not', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let backlog = 3;
  let passes = 0;
  const { looping } = counting({
    everyMs: 60_000,
    async pass() {
      passes++;
      if (backlog === 0) return undefined;
      backlog--;
      return SATURATED;
    },
  });
  await looping.start();
  for (let i = 0; i < 5; i++) {
    t.mock.timers.tick(0);
    await settle();
  }
  assert.equal(passes, 4, 'three saturated passes, then one that took the rest');
  assert.equal(looping.stats().saturated, 3);
  t.mock.timers.tick(59_999);
  await settle();
  assert.equal(passes, 4, 'then the interval');
  t.mock.timers.tick(1);
  await settle();
  assert.equal(passes, 5);
  await looping.stop();
});

test('wake runs a pass now, cuts a back-off short, and during a pass asks for one right after', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fail = false;
  let passes = 0;
  let gate: ReturnType<typeof deferred> | undefined;
  const { looping } = counting({
    everyMs: 60_000,
    backoff: { firstMs: 60_000, maxMs: 60_000 },
    async pass() {
      passes++;
      await gate?.promise;
      if (fail) throw new Error('down');
    },
  });
  await looping.wake();
  assert.equal(passes, 0, 'a loop not started is not woken');
  await looping.start();
  await looping.wake();
  assert.equal(passes, 2, 'woken: a pass without waiting the interval');
  fail = true;
  await looping.wake();
  assert.equal(looping.stats().failingInARow, 1, 'backing off for a minute');
  fail = false;
  await looping.wake();
  assert.equal(passes, 4, 'the back-off cut short');
  assert.equal(looping.stats().failingInARow, 0);

  gate = deferred();
  const woken = looping.wake();
  await settle();
  assert.equal(passes, 5, 'a pass under way');
  const again = looping.wake();
  await settle();
  assert.equal(passes, 5, 'never two passes side by side');
  gate.resolve();
  await woken;
  await settle();
  t.mock.timers.tick(0);
  await again;
  assert.equal(passes, 6, 'the next pass right after the one woken during');
  await looping.stop();
});

test('a failing loop holds up no other: each keeps its own pace', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let healthy = 0;
  const failing = counting({
    everyMs: 100,
    backoff: { firstMs: 100, maxMs: 10_000 },
    async pass() {
      throw new Error('down');
    },
  }).looping;
  const steady = counting({
    everyMs: 100,
    async pass() {
      healthy++;
    },
  }).looping;
  await failing.start();
  await steady.start();
  for (let i = 0; i < 100; i++) {
    t.mock.timers.tick(10);
    await settle();
  }
  assert.equal(healthy, 11, 'a pass every 100 ms for a second, the first at start');
  assert.ok(failing.stats().passes <= 5, `the failing loop backed off (${failing.stats().passes} passes)`);
  await Promise.all([failing.stop(), steady.stop()]);
});

test('stats: passes, failures, when the last success ended and the time spent in passes', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let clock = 1_000_000;
  let fail = false;
  const { looping } = counting({
    now: () => clock,
    async pass() {
      if (fail) throw new Error('down');
    },
  });
  assert.deepEqual(
    [looping.stats().passes, looping.stats().lastSuccessAt, looping.stats().lastPassMs],
    [0, null, null],
  );
  await looping.start();
  clock += 5000;
  fail = true;
  await looping.wake();
  const stats = looping.stats();
  assert.equal(stats.name, 'test');
  assert.deepEqual([stats.passes, stats.failures, stats.failingInARow], [2, 1, 1]);
  assert.equal(stats.lastSuccessAt, 1_000_000, 'a failure leaves the last success as it was');
  assert.ok(stats.passMsTotal >= 0 && stats.lastPassMs !== null);
  await looping.stop();
});

test('the first pass waits firstAfterMs when set; start resolves at once then', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let passes = 0;
  const { looping } = counting({
    firstAfterMs: 500,
    async pass() {
      passes++;
    },
  });
  await looping.start();
  assert.equal(passes, 0);
  t.mock.timers.tick(499);
  await settle();
  assert.equal(passes, 0);
  t.mock.timers.tick(1);
  await settle();
  assert.equal(passes, 1);
  await looping.stop();
});
