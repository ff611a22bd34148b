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
 * Only sessions of this database are considered (the others cannot write our rows). A writer whose
 * start is hidden (a session of another role, unless this one may read all statistics, or one with
 * track_activities off) counts by the clock rule of bounded writes: as if it began
 * 2 × WRITE_TX_TIMEOUT_MS ago; docs/operations.md asks every writer to use the service's role. With
 * track_activities off here, nothing is seen, and the clock rule takes over entirely.
 */
const CLOCK_RULE = `statement_timestamp() - make_interval(secs => $1::float8)`;
const PRIMARY_HORIZON = `(CASE WHEN current_setting('track_activities')::boolean
    THEN (SELECT least(statement_timestamp(), min(coalesce(xact_start, ${CLOCK_RULE}))) FROM pg_stat_activity
          WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() AND datname = current_database())
    ELSE ${CLOCK_RULE} END)`;

/**
 * On a streaming replica, pg_stat_activity shows the replica's sessions, not the primary's
 * writers. There the horizon is the one the primary published last (sync_horizon, replicated with
 * the data: a replica that shows it has replayed every commit behind it). Only when nobody keeps
 * that row up (published more than STALE before the last commit the replica replayed, both on the
 * primary's clock) may the clock rule lift it: writes are bounded by WRITE_TX_TIMEOUT_MS (L), so
 * anything the replica has not received yet committed after its last replayed commit R and began
 * after R − L; positions before R − 2L are safe (the second L is slack for COMMIT and clocks).
 * While the row is kept up it alone decides, so a long write of a script holds replica cursors
 * as it holds the primary's.
 */
const REPLAYED = `coalesce(pg_last_xact_replay_timestamp(), '-infinity'::timestamptz)`;
const REPLICA_HORIZON = `(SELECT CASE WHEN published_at >= ${REPLAYED} - interval '5 seconds' THEN horizon
    ELSE greatest(horizon, ${REPLAYED} - make_interval(secs => $1::float8)) END FROM sync_horizon)`;

const AS_TEXT = (expr: string) =>
  `coalesce(nullif(to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), ''), '-infinity')`;

/**
 * `db`: where cursor pages are read (the replica when configured). `primary`: where the horizon is
 * published for a replica. `slackMs`: 2 × WRITE_TX_TIMEOUT_MS, for the clock rule. `reuseMs`: how
 * long one reading serves every page that asks (see current()).
 */
export function syncHorizonStore(db: Queryable, primary: Queryable, slackMs: number, reuseMs = 100) {
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

    /**
     * Drops the kept reading: called after this instance commits a write, so that a walk its
     * partner starts after the acknowledgement is judged by a reading taken after it.
     */
    forget(): void {
      last = undefined;
    },

    /** Records the primary's horizon for replicas; it only ever moves forward. */
    async publish(): Promise<void> {
      await primary.query(
        'PublishSyncHorizon',
        `UPDATE sync_horizon SET horizon = greatest(horizon, ${PRIMARY_HORIZON}), published_at = statement_timestamp()`,
        [slackMs / 1000],
      );
    },
  };
}

export type SyncHorizonStore = ReturnType<typeof syncHorizonStore>;
