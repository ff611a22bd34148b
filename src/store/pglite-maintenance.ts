import type { Queryable } from './db.js';

/**
 * What PostgreSQL's autovacuum does for a server, done for the embedded database, which has none:
 * PGlite runs PostgreSQL in single-user mode, where no background worker runs. Without it, the
 * space of a row an update or delete replaced is never recorded as free, so every update of a
 * listing writes a new row at the end of the table: a partner re-pushing the same 10,000 listings
 * for a minute grew the listings table from 228 to 812 MB, and it grows for as long as they push
 * (docs/benchmarks.md). The planner never got statistics either, so a database filled through the
 * API was planned blind, and the visibility map that index-only scans need was never set.
 *
 * A pass vacuums the tables with as many dead rows as autovacuum waits for (its default
 * thresholds: 50 rows + 20 % of the table, or 1,000 + 20 % inserted, which marks the new pages
 * all-visible for index-only scans; analyze at 50 + 10 % changed) and analyzes those
 * never analyzed, and those changed enough but not analyzed by this process in the last ten minutes:
 * a partner re-pushing its listings changes a tenth of them in seconds without changing what the
 * planner needs to know, and an analysis of listings holds the only connection for 60–80 ms at
 * 100,000 (its sample: store/pglite.ts; 1.1 s with PostgreSQL's default sample and before
 * migration 013). The counters it reads live in memory and start at zero with
 * each process, so the first pass vacuums every table once (fast where nothing is dead: the
 * visibility map skips clean pages). A vacuum holds the only connection while it runs, so a pass
 * goes table by table: a request waits at most one table's.
 */
export interface MaintenancePass {
  vacuumed: string[];
  analyzed: string[];
  ms: number;
}

const VACUUM_BASE = 50;
const VACUUM_SCALE = 0.2;
const VACUUM_INSERT_BASE = 1000;
const ANALYZE_BASE = 50;
const ANALYZE_SCALE = 0.1;
const ANALYZE_AGAIN_AFTER_MS = 10 * 60_000;
/**
 * Transaction ids wrap around after 2^31: a table whose oldest unfrozen id is this old is vacuumed
 * whatever its counters say (PostgreSQL's vacuum_freeze_table_age, which makes that vacuum freeze
 * it). A server's autovacuum does this for every table, the system catalogs included, and refuses
 * new transactions near the limit; PGlite's single-user mode only warns.
 */
const FREEZE_AGE = 150_000_000;

interface Due {
  /** Schema-qualified and quoted for SQL. */
  name: string;
  vacuum: boolean;
  /** Changed enough since its last analysis. */
  analyze: boolean;
  /** Has rows and no statistics at all. */
  unanalyzed: boolean;
}

/**
 * Each table that needs a vacuum or an analyze now: the service's own (the current schema; $1:
 * vacuum every one) and the system catalogs (analyses rewrite pg_statistic, and their ids must be
 * frozen like any others).
 */
const DUE = `
  SELECT format('%I.%I', s.schemaname, s.relname) AS name,
    ($1::boolean AND s.schemaname = current_schema())
      OR s.n_dead_tup > ${VACUUM_BASE} + ${VACUUM_SCALE} * greatest(c.reltuples, 0)
      OR s.n_ins_since_vacuum > ${VACUUM_INSERT_BASE} + ${VACUUM_SCALE} * greatest(c.reltuples, 0)
      OR age(c.relfrozenxid) > ${FREEZE_AGE} AS vacuum,
    s.n_mod_since_analyze > ${ANALYZE_BASE} + ${ANALYZE_SCALE} * greatest(c.reltuples, 0) AS analyze,
    c.reltuples > 0 AND NOT EXISTS (SELECT 1 FROM pg_statistic st WHERE st.starelid = c.oid) AS unanalyzed
  FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.schemaname IN (current_schema(), 'pg_catalog') AND c.relkind = 'r'
  ORDER BY s.schemaname = current_schema() DESC, s.relname`;

/**
 * A function that runs one maintenance pass on `db` (an embedded database) and says what it did.
 * `stopping`: asked between tables, so that a shutdown waits for one table, not a whole pass.
 */
export function pgliteMaintenance(
  db: Queryable,
  now: () => number = Date.now,
): (stopping?: () => boolean) => Promise<MaintenancePass> {
  let first = true;
  const analyzedAt = new Map<string, number>();
  return async (stopping = () => false) => {
    const startedAt = performance.now();
    // A backend sends its counters to the shared ones at most once a second; this makes the
    // statement below see every change made until now.
    await db.query('FlushStats', 'SELECT pg_stat_force_next_flush()');
    const due = await db.query<Due>('MaintenanceDue', DUE, [first]);
    // Once, even if a table's vacuum fails: later passes go by the counters, not round every table.
    first = false;
    const vacuumed: string[] = [];
    const analyzed: string[] = [];
    for (const table of due) {
      if (stopping()) break;
      const last = analyzedAt.get(table.name);
      const analyze =
        table.unanalyzed || (table.analyze && (last === undefined || now() - last >= ANALYZE_AGAIN_AFTER_MS));
      if (!table.vacuum && !analyze) continue;
      const what = table.vacuum && analyze ? 'VACUUM (ANALYZE)' : table.vacuum ? 'VACUUM' : 'ANALYZE';
      await db.exec('Maintain', `${what} ${table.name}`);
      if (table.vacuum) vacuumed.push(table.name);
      if (analyze) {
        analyzed.push(table.name);
        analyzedAt.set(table.name, now());
      }
    }
    return { vacuumed, analyzed, ms: Math.round(performance.now() - startedAt) };
  };
}
