import type { Logger } from 'pino';
import type { SyncHorizonStore } from '../store/sync-horizon.js';
import { type Loop, type LoopTuning, loop } from './loop.js';

/** How often the primary's sync horizon is published for a replica (docs/sync.md). */
export const HORIZON_PUBLISH_MS = 200;
/**
 * The longest wait after failed publications (the primary unreachable). Well under the 5 s after
 * which a replica stops trusting a horizon nobody keeps up (store/sync-horizon.ts): once the
 * primary is back, the horizon is kept up again before that.
 */
const MAX_BACKOFF_MS = 2_000;

/**
 * With a read replica, cursor pages read there can only pass what the primary's published horizon
 * allows (store/sync-horizon.ts). Every instance publishes; the value only moves forward, so many
 * publishers are harmless. A failure is said once, until a publication succeeds again.
 */
export function syncHorizonLoop(
  horizon: Pick<SyncHorizonStore, 'publish'>,
  logger: Logger,
  tuning: LoopTuning = {},
): Loop {
  return loop({
    name: 'sync-horizon',
    everyMs: HORIZON_PUBLISH_MS,
    backoff: { maxMs: MAX_BACKOFF_MS },
    pass: () => horizon.publish(),
    failed(error, { inARow }) {
      if (inARow === 1) logger.warn({ err: error }, 'could not publish the sync horizon for the replica');
    },
    ...tuning,
  });
}
