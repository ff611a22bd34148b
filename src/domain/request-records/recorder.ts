import type { Logger } from 'pino';
import {
  type FailureInput,
  type KeyState,
  NO_PARTNER,
  noUsage,
  type RequestRecordStore,
  USAGE_COUNTS,
  type UsageInput,
} from '../../store/request-records.js';
import type { Issue } from '../errors.js';

/** What the HTTP layer knows of a partner request once it is answered. */
export interface AnsweredRequest {
  requestId: string;
  partnerId: string | null;
  key: KeyState | null;
  method: string;
  /** The route pattern as the OpenAPI document writes it (`/listings/{listing}`). */
  route: string;
  status: number;
  problem?: { code: string; message: string; issues?: Issue[] | undefined } | undefined;
  durationMs: number;
  /** Bulk upserts: items written and items refused. */
  items?: { written: number; failed: number } | undefined;
}

export interface RecorderOptions {
  /** 0: nothing is recorded, and what was recorded before is deleted. */
  retentionDays: number;
  /** Failures kept one by one per partner and minute (and instance); the rest are counted only. */
  failuresPerMinute: number;
  flushMs: number;
  /** Records held while the database is unreachable; past it they are dropped and counted. */
  maxBuffered: number;
}

const FIRST_ISSUES = 10;
const RETENTION_EVERY_MS = 10 * 60_000;
const RETENTION_BATCH = 10_000;

/**
 * Keeps every failed partner request and per-minute counts per partner, off the request path:
 * `record` only appends to memory; a timer writes the batch in two statements. A slow or failing
 * database never slows or fails a request: the batch waits (bounded) and is tried again.
 */
export function requestRecorder(deps: {
  store: Pick<RequestRecordStore, 'write' | 'deleteBefore'>;
  logger: Logger;
  options: RecorderOptions;
  now?: () => number;
}) {
  const { options } = deps;
  /** Told of records dropped because the buffer was full (the app counts them in a metric). */
  let dropped: (n: number) => void = () => {};
  const now = deps.now ?? Date.now;
  let failures: FailureInput[] = [];
  let usage = new Map<string, UsageInput>();
  /** Failures kept this minute per partner (the per-minute limit). */
  let keptThisMinute = new Map<string, number>();
  let minuteOfKept = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let lastRetention = 0;

  function usageOf(partnerId: string, minute: number): UsageInput {
    const key = `${partnerId}|${minute}`;
    let entry = usage.get(key);
    if (!entry) {
      entry = { partnerId, minute: new Date(minute).toISOString(), ...noUsage() };
      usage.set(key, entry);
    }
    return entry;
  }

  function record(answered: AnsweredRequest): void {
    if (options.retentionDays === 0) return;
    const at = now();
    const minute = at - (at % 60_000);
    const partner = answered.partnerId ?? NO_PARTNER;
    const counts = usageOf(partner, minute);
    counts.requests++;
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
      method: answered.method,
      route: answered.route,
      status: answered.status,
      code: answered.problem?.code ?? null,
      message: answered.problem?.message ?? null,
      issues: issues.slice(0, FIRST_ISSUES).map(({ path, message, code }) => ({ path, message, code })),
      issueCount: issues.length,
      durationMs: Math.round(answered.durationMs * 10) / 10,
    });
  }

  async function writeBatch(): Promise<void> {
    const batch = failures;
    const counts = [...usage.values()];
    failures = [];
    usage = new Map();
    try {
      await deps.store.write(batch, counts);
    } catch (error) {
      // Put back (older first) as far as the buffer allows; the counts are kept in any case.
      const room = Math.max(0, options.maxBuffered - failures.length);
      if (batch.length > room) dropped(batch.length - room);
      failures = [...batch.slice(0, room), ...failures];
      mergeBack(counts);
      throw error;
    }
  }

  function mergeBack(counts: UsageInput[]): void {
    for (const c of counts) {
      const into = usageOf(c.partnerId, Date.parse(c.minute));
      for (const name of USAGE_COUNTS) into[name] += c[name];
    }
  }

  async function enforceRetention(): Promise<void> {
    const cutoff = new Date(now() - options.retentionDays * 86_400_000).toISOString();
    // In batches, so a large backlog never holds one long transaction.
    while ((await deps.store.deleteBefore(cutoff, RETENTION_BATCH)) === RETENTION_BATCH) {}
  }

  async function write(): Promise<void> {
    try {
      if (failures.length || usage.size) await writeBatch();
      if (now() - lastRetention >= RETENTION_EVERY_MS) {
        lastRetention = now();
        await enforceRetention();
      }
    } catch (error) {
      deps.logger.warn({ err: error, buffered: failures.length }, 'request records not written yet');
    }
  }

  /** Writes what is buffered, one write at a time; retention runs every ten minutes. */
  function tick(): Promise<void> {
    // Cleared in a callback, never inside write(): a write that finishes at once must not leave
    // `flushing` set to its settled promise (every later tick would then return it and write nothing).
    flushing ??= write().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  /** Writes everything recorded so far (after a write already under way). */
  async function flush(): Promise<void> {
    await flushing;
    await tick();
  }

  return {
    record,
    flush,
    onDropped(listener: (n: number) => void): void {
      dropped = listener;
    },
    start(): void {
      timer ??= setInterval(() => void tick(), options.flushMs);
      timer.unref();
    },
    /** Stops the timer and writes what is left. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}

export type RequestRecorder = ReturnType<typeof requestRecorder>;
