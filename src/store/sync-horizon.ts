import type { Queryable } from './db.js';

/**
 * The commit horizon of sync cursors: an instant before which no write that is still open can
 * commit a listing. docs/sync.md has the argument; in short, every write takes its updatedAt from
 * write_stamp() (migration 005), which makes the transaction visible as a writer (it takes a
 * transaction id) before reading the clock. So, reading pg_stat_activity at a statement that began
 * at S:
 *  - a writer seen there began at its xact_start, no later than its stamp;
 *  - a writer not seen there either ended before it was looked at (committed: visible to every
 *    statement that starts afterwards) or takes its stamp after S.
 * Hence least(S, oldest xact_start of the writers seen) is a horizon, and it must be read in a
 * statement of its own BEFORE the page: a page statement's snapshot then contains every commit
 * behind it. A statement computing both would take its snapshot first and could miss a writer
 * that committed in between.
 *
 * Only sessions of this database are considered (the others cannot write our rows); sessions of
 * other roles show no xact_start unless the role may read all statistics, so every writer must
 * connect as the service's role (docs/operations.md). With track_activities off nothing is seen,
 * and the clock rule of bounded writes takes over.
 */
const PRIMARY_HORIZON = `(CASE WHEN current_setting('track_activities')::boolean
    THEN (SELECT least(statement_timestamp(), min(xact_start)) FROM pg_stat_activity
          WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() AND datname = current_database())
    ELSE statement_timestamp() - make_interval(secs => $1::float8) END)`;

/**
 * On a streaming replica, pg_stat_activity shows the replica's sessions, not the primary's
 * writers. There the horizon is the one the primary published last (sync_horizon, replicated with
 * the data: a replica that shows it has replayed every commit behind it), or, when that is older,
 * the clock rule: writes are bounded by WRITE_TX_TIMEOUT_MS (L), so anything the replica has not
 * received yet committed after its last replayed commit R and began after R − L; positions before
 * R − 2L are safe (the second L is slack for COMMIT itself and for clocks).
 */
const REPLICA_HORIZON = `greatest((SELECT horizon FROM sync_horizon),
    coalesce(pg_last_xact_replay_timestamp(), '-infinity'::timestamptz) - make_interval(secs => $1::float8))`;

const AS_TEXT = (expr: string) =>
  `coalesce(nullif(to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), ''), '-infinity')`;

/**
 * `db`: where cursor pages are read (the replica when configured). `primary`: where the horizon is
 * published for a replica. `slackMs`: 2 × WRITE_TX_TIMEOUT_MS, for the clock rule. `reuseMs`: how
 * long one reading serves every page that asks (see current()).
 */
export function syncHorizonStore(db: Queryable, primary: Queryable, slackMs: number, reuseMs = 25) {
  let last: { value: Promise<string>; at: number } | undefined;
  const read = async () => {
    const rows = await db.query<{ horizon: string }>(
      'SyncHorizon',
      `SELECT CASE WHEN pg_is_in_recovery() THEN ${AS_TEXT(REPLICA_HORIZON)}
              ELSE ${AS_TEXT(PRIMARY_HORIZON)} END AS horizon`,
      [slackMs / 1000],
    );
    return rows[0]?.horizon ?? '-infinity';
  };
  return {
    /**
     * The horizon as a timestamp string (to the microsecond, UTC); '-infinity' passes nothing. Await
     * it before starting the page it is for, never in the same statement. An older reading is as
     * safe as a fresh one (it only lies earlier) as long as it finished before the page's statement
     * starts, so concurrent pages share one reading, and a reading serves for `reuseMs`: one
     * statement per instance per `reuseMs` at most, at the price of that much freshness.
     */
    current(): Promise<string> {
      const now = performance.now();
      if (!last || now - last.at > reuseMs) {
        const value = read();
        last = { value, at: now };
        // A failed reading is not kept: the next page tries again.
        value.catch(() => {
          if (last?.value === value) last = undefined;
        });
      }
      return last.value;
    },

    /** Records the primary's horizon for replicas; it only ever moves forward. */
    async publish(): Promise<void> {
      await primary.query(
        'PublishSyncHorizon',
        `UPDATE sync_horizon SET horizon = greatest(horizon, ${PRIMARY_HORIZON})`,
        [slackMs / 1000],
      );
    },
  };
}

export type SyncHorizonStore = ReturnType<typeof syncHorizonStore>;
