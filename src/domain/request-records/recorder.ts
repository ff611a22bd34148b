import type { Logger } from 'pino';
import { DbError } from '../../store/errors.js';
import {
  type FailureInput,
  type KeyState,
  type KeyUseInput,
  NO_PARTNER,
  noUsage,
  type RequestRecordStore,
  type TestUseInput,
  USAGE_COUNTS,
  type UsageInput,
} from '../../store/request-records.js';
import type { Issue } from '../errors.js';
import { TEST_DATA_EXPIRY_DAYS } from '../test-data.js';
import { keepable, keepableOrNull } from '../text.js';
import { testActivityOf } from './test-use.js';

/** What the HTTP layer knows of a partner request once it is answered. */
export interface AnsweredRequest {
  requestId: string;
  partnerId: string | null;
  key: KeyState | null;
  /** Made with the partner's test secret (docs/test-mode.md). */
  test?: boolean | undefined;
  /** The partner's secretRotatedAt when the secret was checked: its key use is counted under it. */
  rotatedAt?: string | null | undefined;
  method: string;
  /** The route pattern as the OpenAPI document writes it (`/listings/{listing}`). */
  route: string;
  /** The query named a cursor (a test request that followed one shows the partner synced). */
  cursor?: boolean | undefined;
  /** The listing the path named (its external reference or id), when the route has one. */
  listing?: string | undefined;
  status: number;
  problem?: { code: string; message: string; issues?: Issue[] | undefined } | undefined;
  durationMs: number;
  /** Bulk upserts: items written and items refused. */
  items?: { written: number; failed: number } | undefined;
}

interface RecorderOptions {
  /** 0: nothing is recorded, and what was recorded before is deleted. */
  retentionDays: number;
  /** Failures kept one by one per partner and minute (and instance); the rest are counted only. */
  failuresPerMinute: number;
  /** Records held while the database is unreachable; past it they are dropped and counted. */
  maxBuffered: number;
}

const FIRST_ISSUES = 10;
const RETENTION_EVERY_MS = 10 * 60_000;
const RETENTION_BATCH = 10_000;

/** What an operator is told of records that could not be written (metrics, docs/operations.md). */
interface RecorderTrouble {
  /** Records not written because the buffer was full while the database was unreachable. */
  dropped(n: number): void;
  /** A batch write that failed (the batch waits and is tried again after a back-off). */
  writeFailed(): void;
  /** One record the database refused on its own: set aside (logged with its request id), not retried. */
  setAside(n: number): void;
}

/**
 * Keeps every failed partner request and per-minute counts per partner, off the request path:
 * `record` only appends to memory; a loop (background/request-records.ts) writes the batch in two
 * statements. A slow or failing database never slows or fails a request: the batch waits
 * (bounded) and is tried again after the loop's back-off.
 */
export function requestRecorder(deps: {
  store: Pick<RequestRecordStore, 'write' | 'deleteBefore'>;
  logger: Logger;
  options: RecorderOptions;
  now?: () => number;
}) {
  const { options } = deps;
  /** Told of records dropped, set aside, and failed writes (the app counts them in metrics). */
  let trouble: RecorderTrouble = { dropped() {}, writeFailed() {}, setAside() {} };
  const dropped = (n: number) => trouble.dropped(n);
  /** The cause last logged: a failure is logged when its cause changes, not at every try. */
  let lastCause: string | null = null;
  const now = deps.now ?? Date.now;
  let failures: FailureInput[] = [];
  let usage = new Map<string, UsageInput>();
  /** Requests per partner, rotation and secret state, exact to the request (migration 015). */
  let keyUse = new Map<string, KeyUseInput>();
  /** Test requests per partner and activity: what it has tried in test mode (migration 032). */
  let testUse = new Map<string, TestUseInput>();
  /** Failures kept this minute per partner (the per-minute limit). */
  let keptThisMinute = new Map<string, number>();
  let minuteOfKept = 0;
  let flushing: Promise<void> | undefined;
  let lastRetention = 0;

  function usageOf(partnerId: string, minute: number, test: boolean): UsageInput {
    const key = `${partnerId}|${minute}|${test}`;
    let entry = usage.get(key);
    if (!entry) {
      entry = { partnerId, minute: new Date(minute).toISOString(), test, ...noUsage() };
      usage.set(key, entry);
    }
    return entry;
  }

  /** Requests with one state of a partner's secrets under one rotation, added to those held. */
  const useKey = (use: KeyUseInput) => addUse(keyUse, `${use.partnerId}|${use.rotatedAt}|${use.key}`, use);
  /** Test requests of one partner and activity, added to those held. */
  const useTest = (use: TestUseInput) => addUse(testUse, `${use.partnerId}|${use.activity}`, use);

  function record(answered: AnsweredRequest): void {
    if (options.retentionDays === 0) return;
    const at = now();
    const minute = at - (at % 60_000);
    const partner = answered.partnerId ?? NO_PARTNER;
    const counts = usageOf(partner, minute, answered.test === true);
    counts.requests++;
    // A test secret's use is not the live secret's: the rotation's "moved" verdict and "last
    // used" are read from the key use, which counts live secrets only (docs/test-mode.md).
    if (answered.partnerId && answered.key && !answered.test) {
      const arrived = new Date(at - answered.durationMs).toISOString();
      const { partnerId, key } = answered;
      useKey({
        partnerId,
        rotatedAt: answered.rotatedAt ?? null,
        key,
        requests: 1,
        firstAt: arrived,
        lastAt: arrived,
      });
    }
    const activity = answered.test && answered.partnerId ? testActivityOf(answered) : undefined;
    if (activity && answered.partnerId) {
      const arrived = new Date(at - answered.durationMs).toISOString();
      useTest({ partnerId: answered.partnerId, activity, requests: 1, firstAt: arrived, lastAt: arrived });
    }
    // Which secret: during a rotation's grace the console compares the previous secret's count
    // with the rest (the current secret's) to tell whether the partner moved.
    if (answered.key === 'previous') counts.previousKeyRequests++;
    else if (answered.key === 'retired') counts.retiredKeyRequests++;
    if (answered.items) {
      counts.itemsWritten += answered.items.written;
      counts.itemsFailed += answered.items.failed;
    }
    if (answered.status < 400) return;
    if (answered.status >= 500) counts.serverErrors++;
    else counts.clientErrors++;
    if (answered.status === 429) counts.rateLimited++;
    if (minute !== minuteOfKept) {
      keptThisMinute = new Map();
      minuteOfKept = minute;
    }
    const kept = keptThisMinute.get(partner) ?? 0;
    if (kept >= options.failuresPerMinute || failures.length >= options.maxBuffered) {
      // Counted in the minute's usage, so the view says how many were not kept.
      counts.failuresNotKept++;
      if (failures.length >= options.maxBuffered) dropped(1);
      return;
    }
    keptThisMinute.set(partner, kept + 1);
    const issues = answered.problem?.issues ?? [];
    failures.push({
      at: new Date(at - answered.durationMs).toISOString(),
      requestId: answered.requestId,
      partnerId: answered.partnerId,
      key: answered.key,
      test: answered.test === true,
      method: keepable(answered.method, 32),
      // What reaches a record from outside (an unknown path, a parser's or a validation message
      // naming what was sent) is made safe here: one NUL must not stop every later write.
      route: keepable(answered.route),
      listing: answered.listing === undefined ? null : keepable(answered.listing, 200),
      status: answered.status,
      code: keepableOrNull(answered.problem?.code),
      message: keepableOrNull(answered.problem?.message),
      issues: issues.slice(0, FIRST_ISSUES).map(({ path, message, code }) => ({
        path: keepable(path, 200),
        message: keepable(message, 300),
        code: keepable(code, 64),
      })),
      issueCount: issues.length,
      durationMs: Math.round(answered.durationMs * 10) / 10,
    });
  }

  async function writeBatch(): Promise<void> {
    const batch = failures;
    const counts = [...usage.values()];
    const uses = [...keyUse.values()];
    const tried = [...testUse.values()];
    failures = [];
    usage = new Map();
    keyUse = new Map();
    testUse = new Map();
    try {
      await deps.store.write(batch, counts, uses, tried);
      return;
    } catch (error) {
      // The database is there but refused the batch: one record it cannot take must not hold up
      // the others. The counts alone, then the failures in halves down to the one refused. When
      // the counts alone fail too, the database is not taking anything: all waits for the next try.
      const refusedAlone =
        isRecordRefusal(error) &&
        (await deps.store.write([], counts, uses, tried).then(
          () => true,
          () => false,
        ));
      if (!refusedAlone) {
        putBack(batch);
        mergeBack(counts);
        for (const use of uses) useKey(use);
        for (const use of tried) useTest(use);
        throw error;
      }
    }
    await writeInHalves(batch);
  }

  /** Failures back in the buffer (older first) as far as it allows; the rest dropped and counted. */
  function putBack(batch: FailureInput[]): void {
    const room = Math.max(0, options.maxBuffered - failures.length);
    if (batch.length > room) dropped(batch.length - room);
    failures = [...batch.slice(0, room), ...failures];
  }

  /**
   * Writes failures, halving a refused batch until each refused record stands alone: set aside.
   * A queue, not recursion: when the database stops answering halfway, every part not yet written
   * goes back into the buffer (none is lost), and the write is tried again later.
   */
  async function writeInHalves(batch: FailureInput[]): Promise<void> {
    // The whole batch was just refused: start from its halves.
    const half = Math.ceil(batch.length / 2);
    const queue: FailureInput[][] = batch.length > 1 ? [batch.slice(0, half), batch.slice(half)] : [batch];
    while (queue.length) {
      const part = queue.shift()!;
      if (part.length === 0) continue;
      try {
        await deps.store.write(part, []);
      } catch (error) {
        if (!isRecordRefusal(error)) {
          putBack([part, ...queue].flat());
          throw error;
        }
        if (part.length === 1) {
          trouble.setAside(1);
          deps.logger.warn(
            { err: error, requestId: part[0]!.requestId, partnerId: part[0]!.partnerId },
            'request record set aside: the database refused it',
          );
          continue;
        }
        const middle = Math.ceil(part.length / 2);
        queue.unshift(part.slice(0, middle), part.slice(middle));
      }
    }
  }

  function mergeBack(counts: UsageInput[]): void {
    for (const c of counts) {
      const into = usageOf(c.partnerId, Date.parse(c.minute), c.test);
      for (const name of USAGE_COUNTS) into[name] += c[name];
    }
  }

  async function enforceRetention(): Promise<void> {
    const cutoff = new Date(now() - options.retentionDays * 86_400_000).toISOString();
    // What a partner tried in test is kept as long as its test data's expiry looks back, however
    // short the records' retention: a test read within those days keeps the data (test-data.ts).
    const testUseCutoff = new Date(now() - TEST_DATA_EXPIRY_DAYS * 86_400_000).toISOString();
    // In batches, so a large backlog never holds one long transaction.
    while ((await deps.store.deleteBefore(cutoff, RETENTION_BATCH, testUseCutoff)) === RETENTION_BATCH) {}
  }

  /** Rejects when the database did not take the batch (kept for the next write). */
  async function write(): Promise<void> {
    try {
      if (failures.length || usage.size || testUse.size) await writeBatch();
      if (now() - lastRetention >= RETENTION_EVERY_MS) {
        lastRetention = now();
        await enforceRetention();
      }
      if (lastCause !== null) deps.logger.info('request records are written again');
      lastCause = null;
    } catch (error) {
      trouble.writeFailed();
      const cause = causeOf(error);
      if (cause !== lastCause) {
        deps.logger.warn({ err: error, buffered: failures.length }, 'request records not written yet');
        lastCause = cause;
      }
      throw error;
    }
  }

  /**
   * Writes what is buffered, one write at a time; retention runs every ten minutes. Rejects when
   * the write failed: the flush loop then backs off.
   */
  function pass(): Promise<void> {
    // Cleared in a callback, never inside write(): a write that finishes at once must not leave
    // `flushing` set to its settled promise (every later pass would then return it and write nothing).
    flushing ??= write().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  /**
   * Writes everything recorded so far (after a write already under way), whatever the loop's
   * back-off. Never rejects: a failed write is logged and counted, and its records wait.
   */
  async function flush(): Promise<void> {
    await flushing?.catch(() => {});
    await pass().catch(() => {});
  }

  return {
    record,
    flush,
    pass,
    /** Where dropped and set-aside records and failed writes are told (the app's metrics). */
    onTrouble(listener: RecorderTrouble): void {
      trouble = listener;
    },
  };
}

export type RequestRecorder = ReturnType<typeof requestRecorder>;

/** Counted requests under one key, added to those held: how many, the first and the last. */
function addUse<T extends { requests: number; firstAt: string; lastAt: string }>(
  held: Map<string, T>,
  id: string,
  use: T,
): void {
  const entry = held.get(id);
  if (!entry) held.set(id, { ...use });
  else {
    entry.requests += use.requests;
    if (use.firstAt < entry.firstAt) entry.firstAt = use.firstAt;
    if (use.lastAt > entry.lastAt) entry.lastAt = use.lastAt;
  }
}

/**
 * The database refused the records themselves (a data exception or a broken constraint, SQLSTATE
 * classes 22 and 23), not the write as such: halving the batch finds the record at fault.
 */
const isRecordRefusal = (error: unknown) => error instanceof DbError && error.refusedData;

/** A failure's cause, for logging each cause once: its SQLSTATE or failure kind, else its message. */
const causeOf = (error: unknown) =>
  error instanceof DbError ? `${error.failure}:${error.sqlState ?? ''}` : String((error as Error)?.message);
