import type { Logger } from 'pino';
import type { Queryable } from '../store/db.js';
import { pgliteMaintenance } from '../store/pglite-maintenance.js';
import { type Loop, type LoopTuning, loop } from './loop.js';

/** A pass that held the embedded database this long is logged at info. */
const NOTICEABLE_PASS_MS = 100;

/**
 * The embedded database's autovacuum (store/pglite-maintenance.ts), a pass every `everyMs`
 * (EMBEDDED_VACUUM_INTERVAL_MS), the first one `everyMs` after start. A pass that did something
 * says what and how long it held the connection: at info when requests may have noticed (100 ms
 * or more), like PostgreSQL's log_autovacuum_min_duration, else at debug. A failed one is said
 * once, and tried again a pass later: a vacuum is no more urgent for having failed.
 */
export function embeddedVacuumLoop(
  db: Queryable,
  everyMs: number,
  logger: Logger,
  tuning: LoopTuning = {},
): Loop {
  const maintain = pgliteMaintenance(db);
  return loop({
    name: 'embedded-vacuum',
    everyMs,
    firstAfterMs: everyMs,
    backoff: { maxMs: everyMs },
    async pass(stopping) {
      // Asked between tables: a shutdown waits for one table's vacuum, not a whole pass.
      const done = await maintain(stopping);
      if (done.vacuumed.length || done.analyzed.length)
        logger[done.ms >= NOTICEABLE_PASS_MS ? 'info' : 'debug'](
          done,
          'vacuumed and analyzed the embedded database (it has no autovacuum of its own)',
        );
    },
    failed(error, { inARow }) {
      if (inARow === 1)
        logger.warn({ err: error }, 'could not vacuum the embedded database; retrying at the next pass');
    },
    ...tuning,
  });
}
