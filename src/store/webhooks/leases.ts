import type { Queryable } from '../db.js';
import type { Position } from '../listings/reads.js';
import { acknowledgeParams, acknowledgeSql, advanceSql } from './acknowledge.js';
import { webhookAttemptStore } from './attempts.js';
import { type AttemptOutcome, COLUMNS, type EndpointRecord, toRecord } from './rows.js';

const WALK = { table: 'webhook_endpoints', key: 'id', tiebreak: 'id' };
const ACKNOWLEDGE = acknowledgeSql(WALK);
const ADVANCE = advanceSql(WALK, 'uuid');

/**
 * The dispatcher's claim: due endpoints with something to deliver, leased to `$1` for `$2`
 * seconds, at most `$3`. Exported for the benchmark, which checks its plan on a real dataset.
 */
export const CLAIM_SQL = `UPDATE webhook_endpoints e
   SET lease_owner = $1, lease_until = clock_timestamp() + make_interval(secs => $2::float8)
   WHERE e.id IN (
     SELECT w.id FROM webhook_endpoints w
     WHERE w.enabled AND w.next_attempt_at <= clock_timestamp()
       -- Only endpoints subscribed to the walk of listings (the default); events go their own way.
       AND 'listings.changed' = ANY(w.events)
       AND (w.lease_until IS NULL OR w.lease_until < clock_timestamp())
       AND (w.pending_delivery_id IS NOT NULL
            -- A scalar probe with ORDER BY … LIMIT 1, not EXISTS: EXISTS drops the order, and
            -- the planner then seq-scans listings per endpoint (6 s for 100 endpoints at 100k).
            OR (NOT w.test AND (SELECT true FROM listings l WHERE (l.changed_at, l.id) > (w.position_ts, w.position_id)
                AND NOT l.test ORDER BY l.changed_at, l.id LIMIT 1))
            -- A test endpoint walks its partner's test listings (docs/test-mode.md), on their index.
            OR (w.test AND (SELECT true FROM listings l WHERE l.test AND l.partner_id = w.partner_id
                AND (l.changed_at, l.id) > (w.position_ts, w.position_id) ORDER BY l.changed_at, l.id LIMIT 1)))
     ORDER BY w.next_attempt_at LIMIT $3
     FOR UPDATE SKIP LOCKED)
   RETURNING ${COLUMNS}`;

/**
 * The lease protocol of deliveries: an instance claims due endpoints, begins a delivery, and
 * acknowledges, fails, postpones or releases it; every step that moves an endpoint on is
 * conditioned on still holding its lease (domain/webhooks/round.ts).
 */
export function webhookLeaseStore(db: Queryable) {
  const log = webhookAttemptStore(db);
  return {
    /**
     * Claims up to `limit` endpoints that have something to send (a pending delivery, or any
     * listing change after their position) and are due, leasing them to `owner` for
     * `leaseMs`. SKIP LOCKED: instances claiming at the same moment take different endpoints.
     */
    async claim(owner: string, leaseMs: number, limit: number): Promise<EndpointRecord[]> {
      const rows = await db.query('ClaimWebhookEndpoints', CLAIM_SQL, [owner, leaseMs / 1000, limit]);
      return rows.map(toRecord);
    },

    /**
     * Records the delivery about to be sent and extends the lease. False when the endpoint moved
     * on without this instance (its lease lapsed, it was disabled, resumed elsewhere or replayed):
     * then nothing is sent. A new delivery starts only from the position it was read after; a
     * retry only while it is still the pending one. Persisted before sending, so a crash mid-send
     * retries the same delivery (same webhook-id), which a receiver de-duplicates.
     */
    async beginDelivery(
      id: string,
      owner: string,
      leaseMs: number,
      delivery: {
        deliveryId: string;
        from: Position;
        through: Position;
        retry: boolean;
        scope: string;
        /** A retry read under another scope: the id it goes out under instead of this one. */
        replaces?: string | undefined;
      },
    ): Promise<boolean> {
      const rows = await db.query(
        'BeginWebhookDelivery',
        `UPDATE webhook_endpoints SET pending_delivery_id = $3, pending_through_ts = $4, pending_through_id = $5,
           lease_until = clock_timestamp() + make_interval(secs => $6::float8), pending_scope = $10
         WHERE id = $1 AND lease_owner = $2 AND enabled AND (CASE WHEN $9::boolean
           THEN pending_delivery_id = coalesce($11::uuid, $3)
           ELSE pending_delivery_id IS NULL AND (position_ts, position_id) = ($7::timestamptz, $8::uuid) END)
         RETURNING id`,
        [
          id,
          owner,
          delivery.deliveryId,
          delivery.through.ts,
          delivery.through.id,
          leaseMs / 1000,
          delivery.from.ts,
          delivery.from.id,
          delivery.retry,
          delivery.scope,
          delivery.replaces ?? null,
        ],
      );
      return rows.length > 0;
    },

    /**
     * The receiver acknowledged the pending delivery (or it had nothing left to carry, `outcome`
     * null): the endpoint's own row moves to the delivery's end (acknowledge.ts says what the
     * statement does). `release`: caught up, so the lease ends and changes arriving in the next
     * `spacingMs` go together in the next delivery.
     */
    async acknowledge(
      id: string,
      owner: string,
      deliveryId: string,
      outcome: AttemptOutcome | null,
      release: { spacingMs: number } | null = null,
    ): Promise<boolean> {
      const rows = await db.query(
        'AcknowledgeWebhookDelivery',
        ACKNOWLEDGE,
        acknowledgeParams(id, owner, deliveryId, outcome, release),
      );
      return Number(rows[0]?.moved) > 0;
    },

    /** Nothing of the filter to send: the position may pass `to` (advanceSql says why and how). */
    async advance(id: string, owner: string, to: Position | null, spacingMs: number): Promise<void> {
      await db.query('AdvanceWebhookPosition', ADVANCE, [
        id,
        owner,
        to?.ts ?? null,
        to?.id ?? null,
        spacingMs / 1000,
      ]);
    },

    /**
     * A failed attempt: the next one at `outcome.nextAttemptAt`, or the endpoint disabled. Pass the
     * transaction that records the disable in the audit log, so both land or neither.
     */
    async fail(
      id: string,
      owner: string,
      outcome: AttemptOutcome,
      disableReason: string | null,
      tx: Queryable = db,
    ) {
      const rows = await tx.query(
        'FailWebhookDelivery',
        `UPDATE webhook_endpoints SET pending_attempt = $3, failing_since = coalesce(failing_since, now()),
           next_attempt_at = coalesce($4, now()),
           enabled = enabled AND $5::text IS NULL,
           disabled_at = CASE WHEN $5::text IS NULL THEN disabled_at ELSE now() END,
           disabled_reason = coalesce($5::text, disabled_reason)
         WHERE id = $1 AND lease_owner = $2 AND pending_delivery_id = $6 RETURNING id`,
        [id, owner, outcome.attempt, outcome.nextAttemptAt, disableReason, outcome.deliveryId],
      );
      if (rows.length) await log.recordAttempt(id, outcome, tx);
      return rows.length > 0;
    },

    /** Ends the lease, so another instance (or this one) may claim the endpoint at once. */
    async release(id: string, owner: string): Promise<void> {
      await db.query(
        'ReleaseWebhookLease',
        'UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2',
        [id, owner],
      );
    },

    /** Not now: the partner is disabled or lost a scope. Looked at again at `until`. */
    async postpone(id: string, owner: string, until: Date): Promise<void> {
      await db.query(
        'PostponeWebhookEndpoint',
        'UPDATE webhook_endpoints SET next_attempt_at = $3 WHERE id = $1 AND lease_owner = $2',
        [id, owner, until],
      );
    },
  };
}
