import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type ImageFetcher, imageFetcher } from '../../outbound/image-fetch.js';
import type { ImageFetchResult } from '../../outbound/image-fetch-result.js';
import type { Db, Queryable } from '../../store/db.js';
import type { ClaimedCheck, ImageCheckStore, Recorded } from '../../store/image-checks.js';
import { classifyFetch, IMAGE_LIMITS, type ImageCheck, type ImageState } from './classify.js';
import { type HostLimits, retryAfterMs } from './host-limits.js';
import { type CheckOutcome, imageListingsSettled } from './results.js';
import { failuresAfter, nextCheckAt } from './schedule.js';

/**
 * The image checker of one instance (docs/images.md): claims due URLs under a lease, fetches each
 * within its host's limits, classifies what came back and records the result, with what it
 * changes for listings, in one transaction. Several instances share the work through the leases
 * (store/image-checks.ts): none checks a URL another holds.
 */

/**
 * How long a claim holds its URLs: longer than a whole fetch (20 s) and its write, so a lease
 * lapses only when the instance holding it is gone.
 */
export const IMAGE_CHECK_LEASE_MS = 60_000;
/** A URL no listing uses any more is not fetched; it is looked at again this much later. */
export const UNUSED_RECHECK_MS = 24 * 60 * 60 * 1000;
/** A host over its limit with nothing to say when it frees (a slot, not a token): back this soon. */
const HOST_BUSY_RETRY_MS = 1000;
/**
 * A result whose write failed (a lock wait past WRITE_TX_TIMEOUT_MS, a connection lost): its URL
 * is due again this soon, twice as late after each failure in a row, at most a lease later.
 * Before, it waited for its lease to lapse, a minute, without a word.
 */
export const FAILED_WRITE_RETRY_MS = 5000;
/** URLs whose results failed to be written, remembered for their back-off; past this, forgotten. */
const FAILED_WRITES_KEPT = 10_000;

/** When a URL whose result failed to be written for the `failures`-th time in a row is due again. */
export function failedWriteRetryMs(failures: number): number {
  return Math.min(FAILED_WRITE_RETRY_MS * 2 ** Math.max(0, failures - 1), IMAGE_CHECK_LEASE_MS);
}

/**
 * The fetcher of image checks: the outbound rules of webhooks, the byte cap of the limits.
 * `allowPrivate`/`allowLoopback` lift the address rules (tests; the demo serves its own images).
 */
export function checkFetcher(options: {
  allowPrivate: boolean;
  allowLoopback: boolean;
  timeoutMs: number;
}): ImageFetcher {
  return imageFetcher({ ...options, maxBytes: IMAGE_LIMITS.maxBytes });
}

export interface ImageCheckerDeps {
  db: Pick<Db, 'transaction'>;
  store: Pick<ImageCheckStore, 'claim' | 'release' | 'record'>;
  fetcher: Pick<ImageFetcher, 'fetch'>;
  hosts: HostLimits;
  /** Names this instance in leases. */
  instance: string;
  /** Every write transaction commits within this or is rolled back (WRITE_TX_TIMEOUT_MS). */
  writeTxMs: number;
  /**
   * In the result's transaction, when what partners see of the image changed: the listings'
   * stored JSON and sync position, and the events (docs/images.md).
   */
  changed?: (tx: Queryable, outcome: CheckOutcome) => Promise<void>;
  /** Each fetch that ended, with its check (metrics, tests). */
  observe?: (url: string, check: ImageCheck, durationMs: number) => void;
  /** Where a result that could not be written is told. */
  logger?: Pick<Logger, 'warn'>;
  now?: () => Date;
}

export interface ImageChecker {
  /**
   * Claims as many due URLs as `free` allows and starts their checks; `done` is called as each
   * ends. Returns how many it claimed.
   */
  startDue(free: number, done: () => void): Promise<number>;
  /** Checks under way. */
  inFlight(): number;
  /** Resolves once every check under way has ended (and released or recorded its URL). */
  settle(): Promise<void>;
  /** Abandons the checks under way (their URLs go back, due at once). */
  abandon(): void;
}

export function imageChecker(deps: ImageCheckerDeps): ImageChecker {
  const now = deps.now ?? (() => new Date());
  const active = new Set<Promise<void>>();
  const abort = new AbortController();
  /**
   * URLs whose result changed, with when to look at their listings again. A partner's write that
   * adds a listing using the URL (or rewrites one) while the result commits renders the image
   * from its statement's snapshot, which may predate the result, and the result's rewrite does
   * not see that write's rows yet. Every write commits within WRITE_TX_TIMEOUT_MS, so a second
   * look after twice that finds every such listing committed, and sets its text right. Kept in
   * memory: an instance that stops first leaves them to the next result.
   */
  const settle = new Map<string, number>();
  /** Results of a URL that failed to be written in a row (back-off), until one is written. */
  const failedWrites = new Map<string, number>();
  const settleAfterMs = 2 * deps.writeTxMs + 500;

  async function settleDue(at: number): Promise<void> {
    for (const [url, due] of settle) {
      if (due > at) continue;
      settle.delete(url);
      await deps.db.transaction((tx) => imageListingsSettled(tx, url), { maxMs: deps.writeTxMs });
    }
  }

  async function check(owner: string, claimed: ClaimedCheck): Promise<void> {
    const started = performance.now();
    let result: ImageFetchResult;
    try {
      result = await deps.fetcher.fetch(claimed.url, abort.signal);
    } finally {
      deps.hosts.finish(claimed.url);
    }
    const at = now();
    const check = classifyFetch(result, at);
    deps.observe?.(claimed.url, check, performance.now() - started);
    if (!result.ok && result.retryAfter && (result.status === 429 || result.status === 503)) {
      const ms = retryAfterMs(result.retryAfter, at.getTime());
      if (ms) deps.hosts.pause(claimed.url, at.getTime(), ms);
    }
    if (check.state === 'pending') {
      await deps.store.release(owner, [claimed.url], at);
      return;
    }
    const failures = failuresAfter(claimed.failures, check.state);
    const next = nextCheckAt({ url: claimed.url, state: check.state, checkedAt: at, failures }, at);
    await deps.db.transaction(
      async (tx) => {
        const recorded: Recorded = await deps.store.record(tx, owner, claimed.url, {
          state: check.state,
          format: check.format,
          width: check.width,
          height: check.height,
          bytes: check.bytes,
          contentType: check.contentType,
          problemCode: check.problem?.code ?? null,
          problemMessage: check.problem?.message ?? null,
          checkedAt: at,
          failures,
          nextCheckAt: next,
        });
        if (recorded.changed) settle.set(claimed.url, Date.now() + settleAfterMs);
        if (recorded.changed && deps.changed)
          await deps.changed(tx, {
            url: claimed.url,
            check,
            previousState: (recorded.previousState ?? 'pending') as ImageState,
          });
      },
      { maxMs: deps.writeTxMs },
    );
  }

  return {
    async startDue(free, done) {
      await settleDue(Date.now());
      if (free <= 0) return 0;
      const owner = `${deps.instance}:${randomUUID()}`;
      const claimed = await deps.store.claim(owner, IMAGE_CHECK_LEASE_MS, free);
      const at = now().getTime();
      const unused: string[] = [];
      const busy = new Map<number, string[]>();
      for (const item of claimed) {
        if (!item.used) {
          unused.push(item.url);
          continue;
        }
        const admission = deps.hosts.tryStart(item.url, at);
        if (!admission.admitted) {
          // Skipped, not waited on: the host's other URLs go back and the slot serves another host.
          const retry = admission.retryInMs ?? HOST_BUSY_RETRY_MS;
          busy.set(retry, [...(busy.get(retry) ?? []), item.url]);
          continue;
        }
        const running: Promise<void> = check(owner, item)
          .then(() => void failedWrites.delete(item.url))
          .catch(async (error: unknown) => {
            const failures = (failedWrites.get(item.url) ?? 0) + 1;
            if (failedWrites.size >= FAILED_WRITES_KEPT) failedWrites.clear();
            failedWrites.set(item.url, failures);
            const retryMs = failedWriteRetryMs(failures);
            deps.logger?.warn(
              { err: error, url: item.url, failures },
              `image check result not written; the URL is due again in ${retryMs / 1000} s`,
            );
            // With the database gone the release fails too, and the lease lapses instead.
            await deps.store.release(owner, [item.url], new Date(Date.now() + retryMs)).catch(() => {});
          })
          .finally(() => {
            active.delete(running);
            done();
          });
        active.add(running);
      }
      await deps.store.release(owner, unused, new Date(at + UNUSED_RECHECK_MS));
      for (const [retry, urls] of busy) await deps.store.release(owner, urls, new Date(at + retry));
      return claimed.length;
    },
    inFlight: () => active.size,
    async settle() {
      await Promise.allSettled([...active]);
    },
    abandon() {
      abort.abort();
    },
  };
}
