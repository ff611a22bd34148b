import type { RequestRecorder } from '../domain/request-records/recorder.js';
import { type Loop, type LoopTuning, loop } from './loop.js';

/**
 * How often an instance writes the request records it holds. Often, so each write is small: once
 * a second, the write of a second's failures put ~14 ms on the p99 of the requests it met (200/s).
 */
export const REQUEST_RECORDS_FLUSH_MS = 200;
/** After failed writes: doubling from the flush interval up to this, so a database that refuses is not asked five times a second. */
const MAX_BACKOFF_MS = 30_000;

/**
 * Writes the request records the instance holds (domain/request-records/recorder.ts) every
 * REQUEST_RECORDS_FLUSH_MS, and what is left when it stops. The recorder logs a failed write
 * (once per cause) and counts it; the loop only waits longer before the next.
 */
export function requestRecordsLoop(
  recorder: Pick<RequestRecorder, 'pass' | 'flush'>,
  tuning: LoopTuning = {},
): Loop {
  return loop({
    name: 'request-records',
    everyMs: REQUEST_RECORDS_FLUSH_MS,
    firstAfterMs: REQUEST_RECORDS_FLUSH_MS,
    backoff: { maxMs: MAX_BACKOFF_MS },
    pass: () => recorder.pass(),
    afterLast: () => recorder.flush(),
    ...tuning,
  });
}
