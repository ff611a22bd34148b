import { randomUUID } from 'node:crypto';
import type { AttemptOutcome } from './rows.js';

/**
 * The table of one kind of walk: the walk of listings keeps its state on the endpoint's own row
 * (`webhook_endpoints`, positions by listing id, leases.ts); the walk of events a row of its own
 * per endpoint (`webhook_event_streams`, positions by outbox sequence, event-streams.ts).
 */
interface Walk {
  table: string;
  /** The column naming the endpoint. */
  key: string;
  /** The second half of a position: after the timestamp, what orders the walk. */
  tiebreak: string;
}

/**
 * The receiver acknowledged the pending delivery (or it had nothing left to carry): the position
 * moves to its end, the failure streak ends (not when nothing was carried) and the attempt is logged, in one statement, only by
 * the lease holder. With a spacing (`$5`, seconds) the lease ends too and the walk is not claimed
 * again before it; without (null) the lease is kept. The same statement for both walks, so that
 * acknowledging means one thing.
 */
export function acknowledgeSql({ table, key, tiebreak }: Walk): string {
  return `WITH moved AS (
     UPDATE ${table} SET position_ts = pending_through_ts, position_${tiebreak} = pending_through_${tiebreak},
       pending_delivery_id = NULL, pending_through_ts = NULL, pending_through_${tiebreak} = NULL, pending_scope = NULL,
       -- Without an outcome (a retry whose every listing or event had moved on: nothing was sent)
       -- the failure streak goes on: its start and its attempts, which the next delivery
       -- continues, so the back-off keeps growing and a dead receiver is still disabled in time.
       pending_attempt = CASE WHEN $4::boolean THEN 0 ELSE pending_attempt END,
       failing_since = CASE WHEN $4::boolean THEN NULL ELSE failing_since END,
       next_attempt_at = clock_timestamp() + make_interval(secs => coalesce($5::float8, 0)),
       lease_owner = CASE WHEN $5::float8 IS NULL THEN lease_owner END,
       lease_until = CASE WHEN $5::float8 IS NULL THEN lease_until END
     WHERE ${key} = $1 AND lease_owner = $2 AND pending_delivery_id = $3 RETURNING ${key}),
   logged AS (
     INSERT INTO webhook_attempts (id, endpoint_id, delivery_id, type, attempt, status, listing_count,
       response_code, response_body, error, duration_ms, next_attempt_at)
     SELECT $6, ${key}, $3, $7, $8, 'succeeded', $9, $10, $11, NULL, $12, NULL FROM moved WHERE $4::boolean
     RETURNING id)
   SELECT (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM logged) AS logged`;
}

/**
 * Nothing of the walk to send: the position may pass `$3`/`$4` (null: it stays), and the walk is
 * not due again for `$5` seconds. Without that it kept its old next_attempt_at, the oldest of all,
 * and a walk whose partner's dealers are quiet won every claim (ORDER BY next_attempt_at) while
 * others with deliveries waited. Only the lease holder, and never past a pending delivery.
 * `tiebreakType`: the SQL type of the position's second half.
 */
export function advanceSql({ table, key, tiebreak }: Walk, tiebreakType: 'uuid' | 'bigint'): string {
  const passes = `(position_ts, position_${tiebreak}) < ($3::timestamptz, $4::${tiebreakType})`;
  return `UPDATE ${table} SET
     position_ts = CASE WHEN ${passes} THEN $3 ELSE position_ts END,
     position_${tiebreak} = CASE WHEN ${passes} THEN $4 ELSE position_${tiebreak} END,
     next_attempt_at = clock_timestamp() + make_interval(secs => $5::float8)
   WHERE ${key} = $1 AND lease_owner = $2 AND pending_delivery_id IS NULL`;
}

/**
 * The parameters of acknowledgeSql's statement. Without an outcome (`$4` false) no attempt row is
 * written, so the outcome's fields are read only when there is one.
 */
export function acknowledgeParams(
  endpointId: string,
  owner: string,
  deliveryId: string,
  outcome: AttemptOutcome | null,
  release: { spacingMs: number } | null,
): unknown[] {
  return [
    endpointId,
    owner,
    deliveryId,
    outcome !== null,
    release ? release.spacingMs / 1000 : null,
    randomUUID(),
    outcome?.type ?? '',
    outcome?.attempt ?? 0,
    outcome?.listingCount ?? 0,
    outcome?.responseCode ?? null,
    outcome?.responseBody ?? null,
    outcome?.durationMs ?? 0,
  ];
}
