import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.js';
import type { Position } from '../listings/reads.js';
import { ATTEMPT_COLUMNS, type AttemptOutcome, type AttemptRecord, toAttempt } from './rows.js';

/** The delivery log: every attempt (deliveries and test pings), read newest first, pruned by age. */
export function webhookAttemptStore(db: Queryable) {
  return {
    async recordAttempt(
      endpointId: string,
      outcome: AttemptOutcome,
      tx: Queryable = db,
    ): Promise<AttemptRecord> {
      const rows = await tx.query(
        'RecordWebhookAttempt',
        `INSERT INTO webhook_attempts (id, endpoint_id, delivery_id, type, attempt, status, listing_count,
           response_code, response_body, error, duration_ms, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${ATTEMPT_COLUMNS}`,
        [
          randomUUID(),
          endpointId,
          outcome.deliveryId,
          outcome.type,
          outcome.attempt,
          outcome.ok ? 'succeeded' : 'failed',
          outcome.listingCount,
          outcome.responseCode,
          outcome.responseBody,
          outcome.error,
          outcome.durationMs,
          outcome.nextAttemptAt,
        ],
      );
      return toAttempt(rows[0]!);
    },

    /** The delivery log of one endpoint, newest first, strictly before `before` (the next page). */
    async attempts(endpointId: string, limit: number, before: Position | null): Promise<AttemptRecord[]> {
      const rows = await db.query(
        'ListWebhookAttempts',
        `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE endpoint_id = $1
           AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [endpointId, before?.ts ?? null, before?.id ?? null, limit],
      );
      return rows.map(toAttempt);
    },

    /** Drops delivery-log rows older than `days`. */
    async prune(days: number): Promise<void> {
      await db.query(
        'PruneWebhookAttempts',
        `DELETE FROM webhook_attempts WHERE created_at < now() - make_interval(days => $1)`,
        [days],
      );
    },
  };
}
