import type { Queryable } from './db.js';
import type { Mode } from './listings/mode.js';

export interface LocationStats {
  activeListings: number;
  totalListings: number;
  avgActivePrevMonth?: number;
}

const DAY_MS = 86_400_000;

/** The previous calendar month in UTC, relative to `now`: its first instant and its number of days. */
function previousMonth(now: Date): { start: Date; days: number } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { start, days: Math.round((end.getTime() - start.getTime()) / DAY_MS) };
}

/** A UTC midnight as the day it begins, `YYYY-MM-DD`, for a `date` parameter. */
const utcDay = (instant: Date): string => instant.toISOString().slice(0, 10);

/**
 * `db` is where stats are read (a replica when configured); `primary` keeps the computed monthly
 * means. `settleMs`: how long after a month ends its history can still receive rows (a write
 * transaction that began before midnight stamps its rows with its start time).
 */
export function locationStatsStore(db: Queryable, primary: Queryable = db, settleMs = 0) {
  return {
    /**
     * Counts of each location's own listings (children not included), and the mean number of
     * active listings at the end of each day of the previous month when history covers that month.
     */
    async forLocations(
      ids: readonly string[],
      mode: Mode,
      now: Date,
      tx: Queryable = db,
    ): Promise<Map<string, LocationStats>> {
      const stats = new Map<string, LocationStats>(
        ids.map((id) => [id, { activeListings: 0, totalListings: 0 }]),
      );
      if (ids.length === 0) return stats;
      // Test mode (docs/test-mode.md): the partner's own test listings, counted (at most
      // TEST_LISTING_LIMIT, on their own index); no history, so no monthly mean.
      if (mode.test) {
        const rows = await tx.query<{ id: string; active: number; total: number }>(
          'LocationTestListingCounts',
          `SELECT dealer_profile_id AS id, count(*) FILTER (WHERE status = 'active')::int AS active,
                  count(*)::int AS total
           FROM listings WHERE test AND partner_id = $2 AND dealer_profile_id = ANY($1::uuid[])
           GROUP BY dealer_profile_id`,
          [ids, mode.partnerId],
        );
        for (const row of rows) {
          const entry = stats.get(row.id)!;
          entry.activeListings = row.active;
          entry.totalListings = row.total;
        }
        return stats;
      }
      const month = previousMonth(now);
      // A past month's mean never changes: computed once per location, then read back.
      const monthEnd = month.start.getTime() + month.days * DAY_MS;
      const cacheable = now.getTime() > monthEnd + settleMs;
      // Each answer is one row whose JSON array holds an entry per location, rather than a row per
      // location: for 533 locations, PGlite took 4.0 ms to hand back the 533 rows of counts and
      // 2.3 ms for the same counts as one JSON text (each row is a message of its own to decode).
      // An array of [id, …] entries, not an object keyed by id: JSON.parse builds an object of 533
      // new names in twice the time of the array (bench/results/2026-11-30-location-stats.txt).
      const [[counts], [kept]] = await Promise.all([
        // The trigger-kept counters of migration 004, not a count of the listings.
        tx.query<{ counts: string }>(
          'LocationListingCounts',
          `SELECT coalesce(json_agg(json_build_array(id, active, total)), '[]')::text AS counts
           FROM (SELECT dealer_profile_id AS id, coalesce(sum(n) FILTER (WHERE status = 'active'), 0) AS active,
                        sum(n) AS total
                 FROM listing_counts WHERE dealer_profile_id = ANY($1::uuid[]) GROUP BY dealer_profile_id) c`,
          [ids],
        ),
        // When history began, and the kept means of that month (when it can have them): one
        // round trip, run beside the counts, not two one after the other.
        // `covered` (history began by the month's start) rather than the start itself. The month's
        // start is passed twice ($2 as the kept means' date key, $4 as an instant): a parameter has
        // one type, and a date cast to timestamptz would move with the session's time zone. The key
        // goes as its UTC day: a Date sent as a date would be sent in the process's local time (pg's
        // serialization), and west of UTC the 1st of a month would be keyed as the day before.
        tx.query<{ covered: boolean | null; means: string }>(
          'LocationMonthStats',
          `SELECT s.history_started_at <= $4::timestamptz AS covered,
                  coalesce((SELECT json_agg(json_build_array(dealer_profile_id, avg_active)) FROM location_month_stats
                            WHERE $3::boolean AND month = $2::date AND dealer_profile_id = ANY($1::uuid[])),
                           '[]')::text AS means
           FROM service_info s`,
          [ids, utcDay(month.start), cacheable, month.start],
        ),
      ]);
      for (const [id, active, total] of JSON.parse(counts!.counts) as [string, number, number][]) {
        const entry = stats.get(id)!;
        entry.activeListings = active;
        entry.totalListings = total;
      }
      if (!kept?.covered) return stats;
      const byId = new Map(JSON.parse(kept.means) as [string, number][]);
      const missing = ids.filter((id) => !byId.has(id));
      if (missing.length) {
        const computed = await meanActive(tx, missing, month);
        for (const id of missing) byId.set(id, computed.get(id) ?? 0);
        if (cacheable) {
          await primary.query(
            'SaveLocationMonthStats',
            `INSERT INTO location_month_stats (dealer_profile_id, month, avg_active)
             SELECT id, $2::date, avg FROM unnest($1::uuid[], $3::float8[]) AS x(id, avg)
             ON CONFLICT DO NOTHING`,
            [missing, utcDay(month.start), missing.map((id) => byId.get(id)!)],
          );
        }
      }
      for (const [id, entry] of stats) entry.avgActivePrevMonth = Math.round((byId.get(id) ?? 0) * 100) / 100;
      return stats;
    },
  };
}

/**
 * The mean number of active listings at the end of each day of the month, per location, from the
 * status history.
 */
async function meanActive(
  tx: Queryable,
  ids: readonly string[],
  month: { start: Date; days: number },
): Promise<Map<string, number>> {
  // Each history row starts an interval [changed_at, next change) in one status at one dealer.
  // An active interval counts once for every day-end E_k = start + k days (k = 1..days) with
  // changed_at < E_k <= until; summing those counts and dividing by the days gives the mean.
  const averages = await tx.query<{ id: string; avg: number }>(
    'LocationAvgActivePrevMonth',
    `WITH h AS (
           SELECT dealer_profile_id, status, changed_at,
                  lead(changed_at) OVER (PARTITION BY listing_id ORDER BY changed_at, id) AS until
           FROM listing_status_history
           WHERE listing_id IN (SELECT listing_id FROM listing_status_history WHERE dealer_profile_id = ANY($1::uuid[]))
             AND changed_at < $2::timestamptz + make_interval(days => $3)
         )
         SELECT dealer_profile_id AS id,
                sum(greatest(0,
                  least($3, coalesce(floor(extract(epoch FROM until - $2::timestamptz) / 86400)::int, $3))
                  - greatest(1, floor(extract(epoch FROM changed_at - $2::timestamptz) / 86400)::int + 1) + 1
                ))::float8 / $3 AS avg
         FROM h
         WHERE status = 'active' AND dealer_profile_id = ANY($1::uuid[]) AND (until IS NULL OR until > $2::timestamptz)
         GROUP BY dealer_profile_id`,
    [ids, month.start, month.days],
  );
  return new Map(averages.map((r) => [r.id, r.avg]));
}

export type LocationStatsStore = ReturnType<typeof locationStatsStore>;
