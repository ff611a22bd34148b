import type { Queryable } from './db.js';

/** A partner's test data as a whole (docs/test-mode.md): its size, its wipe, its expiry. */
export function testDataStore(db: Queryable) {
  return {
    /**
     * The partner's test listings, counted under a lock held to the end of the transaction, so
     * that test writes of one partner that may add listings run one after the other (live writes
     * never take it).
     */
    async lockAndCount(partnerId: string, tx: Queryable = db): Promise<number> {
      await tx.query('LockTestWrites', `SELECT pg_advisory_xact_lock(hashtext('test-data:' || $1::text))`, [
        partnerId,
      ]);
      const rows = await tx.query<{ n: number }>(
        'CountTestListings',
        'SELECT count(*)::int AS n FROM listings WHERE test AND partner_id = $1',
        [partnerId],
      );
      return rows[0]!.n;
    },

    /** Deletes every test listing of the partner and its test events; how many listings. */
    async wipe(partnerId: string, tx: Queryable = db): Promise<number> {
      const rows = await tx.query<{ n: number }>(
        'WipeTestData',
        `WITH gone AS (DELETE FROM listings WHERE test AND partner_id = $1 RETURNING 1),
              events_gone AS (DELETE FROM events WHERE test AND partner_id = $1)
         SELECT count(*)::int AS n FROM gone`,
        [partnerId],
      );
      return rows[0]!.n;
    },

    /**
     * Deletes the test data of every partner that has not touched it in `days` days: none of its
     * test listings written by it (updated_at: a change of the service's, an image check's
     * result, moves changed_at only), and no successful test read or write of listings,
     * locations or events (partner_test_use, kept at least 30 days for this: recorder.ts; not a
     * delivery to its test endpoint, which the service sends). The partners whose data went,
     * with how many listings each.
     */
    async expire(days: number, tx: Queryable = db): Promise<{ partnerId: string; deleted: number }[]> {
      const rows = await tx.query<{ partner_id: string; n: number }>(
        'ExpireTestData',
        `WITH stale AS (
           SELECT l.partner_id FROM listings l WHERE l.test GROUP BY l.partner_id
           HAVING max(l.updated_at) < now() - make_interval(days => $1)
              AND NOT EXISTS (SELECT 1 FROM partner_test_use u WHERE u.partner_id = l.partner_id
                              AND u.activity <> 'webhook' AND u.last_at >= now() - make_interval(days => $1))),
         gone AS (DELETE FROM listings l USING stale s WHERE l.test AND l.partner_id = s.partner_id
                  RETURNING l.partner_id),
         events_gone AS (DELETE FROM events e USING stale s WHERE e.test AND e.partner_id = s.partner_id)
         SELECT partner_id, count(*)::int AS n FROM gone GROUP BY partner_id`,
        [days],
      );
      return rows.map((r) => ({ partnerId: r.partner_id, deleted: r.n }));
    },
  };
}

export type TestDataStore = ReturnType<typeof testDataStore>;
