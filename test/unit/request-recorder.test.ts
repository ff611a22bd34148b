import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Logger } from 'pino';
import { REQUEST_RECORDS_FLUSH_MS, requestRecordsLoop } from '../../src/background/request-records.js';
import { type AnsweredRequest, requestRecorder } from '../../src/domain/request-records/recorder.js';
import { DbError } from '../../src/store/errors.js';
import { type FailureInput, NO_PARTNER, type UsageInput } from '../../src/store/request-records.js';

// The request recorder (docs/operations.md): per-minute counts, failures kept up to a limit per
// partner and minute, text made safe, retention, and the back-off of its loop after failed writes. An
// in-memory store and an explicit clock; no database.

const T0 = Date.parse('2026-11-26T10:00:00.000Z');

function harness(options: Partial<Parameters<typeof requestRecorder>[0]['options']> = {}) {
  const clock = { now: T0 + 30_000 };
  const writes: { failures: FailureInput[]; usage: UsageInput[] }[] = [];
  const attempts: { failures: FailureInput[]; usage: UsageInput[] }[] = [];
  const deletes: { cutoff: string; limit: number; testUseCutoff?: string | undefined }[] = [];
  const deleteAnswers: number[] = [];
  const logs: { level: string; message: string }[] = [];
  const trouble = { dropped: 0, writeFailed: 0, setAside: 0 };
  let refuse: (failures: FailureInput[], usage: UsageInput[]) => unknown = () => undefined;
  const logger = {
    warn: (_: unknown, message: string) => logs.push({ level: 'warn', message }),
    info: (message: string) => logs.push({ level: 'info', message }),
  } as unknown as Logger;
  const recorder = requestRecorder({
    store: {
      async write(failures, usage) {
        attempts.push({ failures, usage });
        const error = refuse(failures, usage);
        if (error) throw error;
        writes.push({ failures, usage });
      },
      async deleteBefore(cutoff, limit, testUseCutoff) {
        deletes.push({ cutoff, limit, testUseCutoff });
        return deleteAnswers.shift() ?? 0;
      },
    },
    logger,
    options: { retentionDays: 7, failuresPerMinute: 1000, maxBuffered: 10_000, ...options },
    now: () => clock.now,
  });
  recorder.onTrouble({
    dropped: (n) => {
      trouble.dropped += n;
    },
    writeFailed: () => {
      trouble.writeFailed++;
    },
    setAside: (n) => {
      trouble.setAside += n;
    },
  });
  return {
    recorder,
    clock,
    writes,
    attempts,
    deletes,
    deleteAnswers,
    logs,
    trouble,
    refuseWith(fn: typeof refuse) {
      refuse = fn;
    },
    failures: () => writes.flatMap((w) => w.failures),
    usage: () => writes.flatMap((w) => w.usage),
  };
}

const answered = (over: Partial<AnsweredRequest> = {}): AnsweredRequest => ({
  requestId: 'req-1',
  partnerId: 'partner-a',
  key: 'current',
  method: 'PUT',
  route: '/listings/{listing}',
  status: 422,
  problem: { code: 'VALIDATION_FAILED', message: 'price: must be positive' },
  durationMs: 12.34,
  ...over,
});

test('a request is counted in the usage of its minute, under its partner', async () => {
  const h = harness();
  h.recorder.record(answered({ status: 200, problem: undefined }));
  h.recorder.record(answered({ status: 201, problem: undefined }));
  await h.recorder.flush();
  assert.equal(h.failures().length, 0, 'a success is counted, not kept');
  assert.deepEqual(h.usage(), [
    {
      partnerId: 'partner-a',
      minute: '2026-11-26T10:00:00.000Z',
      requests: 2,
      clientErrors: 0,
      serverErrors: 0,
      rateLimited: 0,
      itemsWritten: 0,
      itemsFailed: 0,
      failuresNotKept: 0,
      previousKeyRequests: 0,
      retiredKeyRequests: 0,
      test: false,
    },
  ]);
  // A test secret's requests are counted in a row of their own (docs/test-mode.md).
  h.recorder.record(answered({ status: 200, problem: undefined, test: true }));
  await h.recorder.flush();
  assert.deepEqual(
    h.usage().map((u) => [u.test, u.requests]),
    [
      [false, 2],
      [true, 1],
    ],
  );
});

test('requests are counted per secret: the previous one (a grace) and retired ones apart', async () => {
  const h = harness();
  h.recorder.record(answered({ status: 200, key: 'current' }));
  h.recorder.record(answered({ status: 200, key: 'previous' }));
  h.recorder.record(answered({ status: 200, key: 'previous' }));
  h.recorder.record(
    answered({ status: 401, key: 'retired', problem: { code: 'UNAUTHORIZED', message: 'x' } }),
  );
  h.recorder.record(answered({ partnerId: null, key: null, status: 401 }));
  await h.recorder.flush();
  const byPartner = Object.fromEntries(
    h.usage().map((u) => [u.partnerId, [u.requests, u.previousKeyRequests, u.retiredKeyRequests]]),
  );
  assert.deepEqual(byPartner, { 'partner-a': [4, 2, 1], [NO_PARTNER]: [1, 0, 0] });
});

test('the counts per secret survive a failed write (merged back)', async () => {
  const h = harness();
  let fail = true;
  h.refuseWith(() => (fail ? new Error('down') : undefined));
  h.recorder.record(answered({ status: 200, key: 'previous' }));
  await h.recorder.flush();
  fail = false;
  h.recorder.record(answered({ status: 200, key: 'previous' }));
  await h.recorder.flush();
  assert.deepEqual(
    h.usage().map((u) => [u.requests, u.previousKeyRequests]),
    [[2, 2]],
  );
});

test('requests in two minutes are two rows of usage', async () => {
  const h = harness();
  h.recorder.record(answered({ status: 200 }));
  h.clock.now = T0 + 60_000;
  h.recorder.record(answered({ status: 200 }));
  await h.recorder.flush();
  assert.deepEqual(
    h.usage().map((u) => [u.minute, u.requests]),
    [
      ['2026-11-26T10:00:00.000Z', 1],
      ['2026-11-26T10:01:00.000Z', 1],
    ],
  );
});

test('client errors, server errors and 429s are counted apart; bulk items add up', async () => {
  const h = harness();
  h.recorder.record(answered({ status: 422 }));
  h.recorder.record(answered({ status: 429, problem: { code: 'RATE_LIMITED', message: 'slow down' } }));
  h.recorder.record(answered({ status: 503, problem: { code: 'SERVICE_UNAVAILABLE', message: 'x' } }));
  h.recorder.record(answered({ status: 200, items: { written: 7, failed: 0 } }));
  h.recorder.record(answered({ status: 207, items: { written: 3, failed: 2 } }));
  await h.recorder.flush();
  const [usage] = h.usage();
  assert.deepEqual(
    [usage?.requests, usage?.clientErrors, usage?.serverErrors, usage?.rateLimited],
    [5, 2, 1, 1],
  );
  assert.deepEqual([usage?.itemsWritten, usage?.itemsFailed], [10, 2]);
  assert.equal(h.failures().length, 3);
});

test('a failure is kept with when it started, what was asked and what was answered', async () => {
  const h = harness();
  h.recorder.record(
    answered({
      durationMs: 12.345,
      listing: 'REF-1',
      problem: {
        code: 'VALIDATION_FAILED',
        message: 'price: must be positive',
        issues: [{ path: 'price', message: 'must be positive', code: 'too_small' }],
      },
    }),
  );
  await h.recorder.flush();
  assert.deepEqual(h.failures(), [
    {
      at: new Date(T0 + 30_000 - 12.345).toISOString(),
      requestId: 'req-1',
      partnerId: 'partner-a',
      key: 'current',
      method: 'PUT',
      route: '/listings/{listing}',
      listing: 'REF-1',
      status: 422,
      code: 'VALIDATION_FAILED',
      message: 'price: must be positive',
      issues: [{ path: 'price', message: 'must be positive', code: 'too_small' }],
      issueCount: 1,
      durationMs: 12.3,
      test: false,
    },
  ]);
  // A test secret's failure is kept marked as such (docs/test-mode.md).
  h.recorder.record(answered({ requestId: 'req-2', test: true }));
  await h.recorder.flush();
  assert.deepEqual(
    h.failures().map((f) => [f.requestId, f.test]),
    [
      ['req-1', false],
      ['req-2', true],
    ],
  );
});

test('a request without a partner is counted under NO_PARTNER and kept with partnerId null', async () => {
  const h = harness();
  h.recorder.record(answered({ partnerId: null, key: null, status: 401, problem: undefined }));
  await h.recorder.flush();
  assert.equal(h.usage()[0]?.partnerId, NO_PARTNER);
  assert.deepEqual(
    h.failures().map((f) => [f.partnerId, f.key, f.code, f.message]),
    [[null, null, null, null]],
  );
});

test('only the first 10 issues are kept; issueCount says how many there were', async () => {
  const h = harness();
  const issues = Array.from({ length: 25 }, (_, i) => ({ path: `items.${i}`, message: 'bad', code: 'c' }));
  h.recorder.record(answered({ problem: { code: 'VALIDATION_FAILED', message: 'm', issues } }));
  await h.recorder.flush();
  const [failure] = h.failures();
  assert.equal(failure?.issues.length, 10);
  assert.equal(failure?.issues[9]?.path, 'items.9');
  assert.equal(failure?.issueCount, 25);
});

test('text from outside is made keepable: NUL and lone surrogates replaced, long text cut', async () => {
  const h = harness();
  h.recorder.record(
    answered({
      method: 'X'.repeat(40),
      route: '/nope/\u0000',
      problem: {
        code: 'INVALID\ud800',
        message: 'y'.repeat(1200),
        issues: [{ path: 'p'.repeat(250), message: 'm\u0000', code: 'c'.repeat(70) }],
      },
    }),
  );
  await h.recorder.flush();
  const [f] = h.failures();
  assert.equal(f?.method, `${'X'.repeat(32)}… (40 characters)`);
  assert.equal(f?.route, '/nope/\uFFFD');
  assert.equal(f?.code, 'INVALID\uFFFD');
  assert.equal(f?.message, `${'y'.repeat(1000)}… (1200 characters)`);
  assert.deepEqual(f?.issues[0], {
    path: `${'p'.repeat(200)}… (250 characters)`,
    message: 'm\uFFFD',
    code: `${'c'.repeat(64)}… (70 characters)`,
  });
});

test('failures past the per-minute limit of a partner are counted as not kept', async () => {
  const h = harness({ failuresPerMinute: 2 });
  for (const id of ['r1', 'r2', 'r3', 'r4']) h.recorder.record(answered({ requestId: id }));
  h.recorder.record(answered({ requestId: 'b1', partnerId: 'partner-b' }));
  await h.recorder.flush();
  assert.deepEqual(
    h.failures().map((f) => f.requestId),
    ['r1', 'r2', 'b1'],
  );
  const byPartner = Object.fromEntries(h.usage().map((u) => [u.partnerId, u.failuresNotKept]));
  assert.deepEqual(byPartner, { 'partner-a': 2, 'partner-b': 0 });
  assert.equal(h.trouble.dropped, 0, 'over the limit is not dropped for lack of room');
});

test('the per-minute limit starts again in the next minute', async () => {
  const h = harness({ failuresPerMinute: 1 });
  h.recorder.record(answered({ requestId: 'r1' }));
  h.recorder.record(answered({ requestId: 'r2' }));
  h.clock.now = T0 + 60_000;
  h.recorder.record(answered({ requestId: 'r3' }));
  await h.recorder.flush();
  assert.deepEqual(
    h.failures().map((f) => f.requestId),
    ['r1', 'r3'],
  );
});

test('a full buffer drops failures and says so; they are counted as not kept', async () => {
  const h = harness({ maxBuffered: 2 });
  for (const id of ['r1', 'r2', 'r3']) h.recorder.record(answered({ requestId: id }));
  assert.equal(h.trouble.dropped, 1);
  await h.recorder.flush();
  assert.deepEqual(
    h.failures().map((f) => f.requestId),
    ['r1', 'r2'],
  );
  assert.equal(h.usage()[0]?.failuresNotKept, 1);
});

test('retention 0: nothing is recorded, and what was kept before is deleted up to now', async () => {
  const h = harness({ retentionDays: 0 });
  h.recorder.record(answered());
  h.recorder.record(answered({ status: 200 }));
  await h.recorder.flush();
  assert.equal(h.attempts.length, 0);
  // What was tried in test stays 30 days: test data's expiry reads it (store/test-data.ts).
  const testUseCutoff = new Date(T0 + 30_000 - 30 * 86_400_000).toISOString();
  assert.deepEqual(h.deletes, [
    { cutoff: new Date(T0 + 30_000).toISOString(), limit: 10_000, testUseCutoff },
  ]);
});

test('retention deletes what is older than the retention days, in batches of 10,000', async () => {
  const h = harness({ retentionDays: 7 });
  h.deleteAnswers.push(10_000, 10_000, 42);
  await h.recorder.flush();
  const cutoff = new Date(T0 + 30_000 - 7 * 86_400_000).toISOString();
  const testUseCutoff = new Date(T0 + 30_000 - 30 * 86_400_000).toISOString();
  assert.deepEqual(h.deletes, [
    { cutoff, limit: 10_000, testUseCutoff },
    { cutoff, limit: 10_000, testUseCutoff },
    { cutoff, limit: 10_000, testUseCutoff },
  ]);
});

test('retention runs at most every ten minutes', async () => {
  const h = harness();
  await h.recorder.flush();
  h.clock.now += 10 * 60_000 - 1;
  await h.recorder.flush();
  assert.equal(h.deletes.length, 1);
  h.clock.now += 1;
  await h.recorder.flush();
  assert.equal(h.deletes.length, 2);
});

test('a failed write keeps the batch: the next write carries the failures and the counts', async () => {
  const h = harness();
  h.refuseWith(() => new Error('connection refused'));
  h.recorder.record(answered({ requestId: 'r1' }));
  await h.recorder.flush();
  assert.equal(h.writes.length, 0);
  assert.equal(h.trouble.writeFailed, 1);
  h.recorder.record(answered({ requestId: 'r2' }));
  h.refuseWith(() => undefined);
  await h.recorder.flush();
  assert.deepEqual(
    h.failures().map((f) => f.requestId),
    ['r1', 'r2'],
  );
  assert.equal(h.usage().length, 1, 'the counts of one partner and minute are merged back into one row');
  assert.equal(h.usage()[0]?.requests, 2);
});

test('a failure is logged once per cause, and the recovery once', async () => {
  const h = harness();
  h.refuseWith(() => new Error('connection refused'));
  h.recorder.record(answered());
  await h.recorder.flush();
  await h.recorder.flush();
  h.refuseWith(() => new Error('timeout'));
  await h.recorder.flush();
  h.refuseWith(() => undefined);
  await h.recorder.flush();
  await h.recorder.flush();
  assert.deepEqual(
    h.logs.map((l) => `${l.level}: ${l.message}`),
    [
      'warn: request records not written yet',
      'warn: request records not written yet',
      'info: request records are written again',
    ],
  );
});

test('a record the database refuses (SQLSTATE 22) is set aside; the others and the counts are written', async () => {
  const h = harness();
  const refusal = new DbError(
    { code: '22P05', message: 'unsupported Unicode escape sequence' },
    'WriteRecords',
  );
  h.refuseWith((failures) => (failures.some((f) => f.requestId === 'bad') ? refusal : undefined));
  for (const id of ['r1', 'r2', 'bad', 'r4', 'r5']) h.recorder.record(answered({ requestId: id }));
  await h.recorder.flush();
  assert.deepEqual(
    h
      .failures()
      .map((f) => f.requestId)
      .sort(),
    ['r1', 'r2', 'r4', 'r5'],
  );
  assert.equal(h.usage()[0]?.requests, 5);
  assert.equal(h.trouble.setAside, 1);
  assert.equal(h.trouble.writeFailed, 0);
});

test('an outage while a refused batch is halved puts every part not yet written back', async () => {
  const h = harness();
  const refusal = new DbError({ code: '23514', message: 'check violation' }, 'WriteRecords');
  let calls = 0;
  h.refuseWith(() => {
    calls++;
    if (calls === 1) return refusal; // the whole batch
    if (calls === 2) return undefined; // the counts alone
    if (calls === 3) return new DbError({ code: '08006', message: 'connection failure' }, 'WriteRecords');
    return undefined;
  });
  for (const id of ['r1', 'r2', 'r3', 'r4']) h.recorder.record(answered({ requestId: id }));
  await h.recorder.flush();
  assert.equal(h.trouble.writeFailed, 1);
  await h.recorder.flush();
  assert.deepEqual(
    h
      .failures()
      .map((f) => f.requestId)
      .sort(),
    ['r1', 'r2', 'r3', 'r4'],
  );
  assert.equal(h.trouble.setAside, 0);
});

test('after failed writes the flush loop waits: the flush interval, doubling, at most 30 s', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const h = harness();
  h.refuseWith(() => new Error('down'));
  h.recorder.record(answered());
  // No jitter: the waits are the back-off's own steps.
  const flushing = requestRecordsLoop(h.recorder, { random: () => 0 });
  await flushing.start();
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  /** Moves the timers on by `ms` and says whether a write was tried meanwhile. */
  const triedAfter = async (ms: number) => {
    const before = h.attempts.length;
    t.mock.timers.tick(ms);
    await settle();
    return h.attempts.length > before;
  };
  assert.equal(await triedAfter(REQUEST_RECORDS_FLUSH_MS), true, 'the first write is tried');
  for (const wait of [200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]) {
    assert.equal(await triedAfter(wait - 1), false, `not before ${wait} ms`);
    assert.equal(await triedAfter(1), true, `after ${wait} ms`);
  }
  h.refuseWith(() => undefined);
  assert.equal(await triedAfter(30_000), true);
  assert.equal(h.failures().length, 1);
  // A success resets the back-off: the next failure waits the flush interval again.
  h.refuseWith(() => new Error('down'));
  h.recorder.record(answered());
  assert.equal(await triedAfter(REQUEST_RECORDS_FLUSH_MS), true);
  assert.equal(await triedAfter(REQUEST_RECORDS_FLUSH_MS - 1), false);
  assert.equal(await triedAfter(1), true);
  await flushing.stop();
});
