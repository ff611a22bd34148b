import type { Queryable } from '../db.js';
import type { EventPosition } from '../events.js';
import { acknowledgeParams, acknowledgeSql, advanceSql } from './acknowledge.js';
import { webhookAttemptStore } from './attempts.js';
import type { AttemptOutcome } from './rows.js';

const WALK = { table: 'webhook_event_streams', key: 'endpoint_id', tiebreak: 'seq' };
const ACKNOWLEDGE = acknowledgeSql(WALK);
const ADVANCE = advanceSql(WALK, 'bigint');

/**
 * Each endpoint's walk of the events outbox (migration 019): its position, the delivery in flight,
 * its failure streak and its lease, with the same lease protocol as the walk of listings
 * (leases.ts): every step that moves a walk on is conditioned on still holding its lease, so an
 * instance killed mid-delivery only delays the walk until its lease lapses.
 */
export interface EventStreamRecord {
  endpointId: string;
  /** After the last event the receiver acknowledged. */
  position: EventPosition;
  /** The delivery sent and not yet acknowledged: it is retried, nothing passes it. */
  pending: { deliveryId: string; through: EventPosition; attempt: number; scope: string | null } | null;
  failingSince: string | null;
  /** Attempts so far in the failure streak (0 without one): a new delivery goes on counting. */
  streakAttempts: number;
}

const TS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const STREAM_COLUMNS = `endpoint_id, ${TS('position_ts')} AS position_ts, position_seq::text AS position_seq,
  pending_delivery_id, ${TS('pending_through_ts')} AS pending_through_ts, pending_through_seq::text AS pending_through_seq,
  pending_attempt, pending_scope, failing_since`;

function toStream(row: Record<string, unknown>): EventStreamRecord {
  return {
    endpointId: row.endpoint_id as string,
    position: { ts: row.position_ts as string, seq: row.position_seq as string },
    pending: row.pending_delivery_id
      ? {
          deliveryId: row.pending_delivery_id as string,
          through: { ts: row.pending_through_ts as string, seq: row.pending_through_seq as string },
          attempt: row.pending_attempt as number,
          scope: row.pending_scope as string | null,
        }
      : null,
    failingSince: row.failing_since ? (row.failing_since as Date).toISOString() : null,
    streakAttempts: row.failing_since ? (row.pending_attempt as number) : 0,
  };
}

export function webhookEventStreamStore(db: Queryable) {
  const log = webhookAttemptStore(db);
  return {
    /**
     * Leases up to `limit` walks that are due, of enabled endpoints subscribed to one of `types`,
     * with a delivery pending or any event after their position. SKIP LOCKED: instances claiming
     * at the same moment take different walks.
     */
    async claim(owner: string, leaseMs: number, limit: number, types: readonly string[]) {
      const rows = await db.query(
        'ClaimWebhookEventStreams',
        `UPDATE webhook_event_streams s
           SET lease_owner = $1, lease_until = clock_timestamp() + make_interval(secs => $2::float8)
         WHERE s.endpoint_id IN (
           SELECT w.endpoint_id FROM webhook_event_streams w JOIN webhook_endpoints e ON e.id = w.endpoint_id
           WHERE e.enabled AND e.events && $4::text[] AND w.next_attempt_at <= clock_timestamp()
             AND (w.lease_until IS NULL OR w.lease_until < clock_timestamp())
             AND (w.pending_delivery_id IS NOT NULL
                  OR (SELECT true FROM events v WHERE (v.stamp, v.seq) > (w.position_ts, w.position_seq)
                      AND v.test = e.test AND (NOT v.test OR v.partner_id = e.partner_id) ORDER BY v.stamp, v.seq LIMIT 1))
           ORDER BY w.next_attempt_at LIMIT $3
           FOR UPDATE OF w SKIP LOCKED)
         RETURNING ${STREAM_COLUMNS}`,
        [owner, leaseMs / 1000, limit, types],
      );
      return rows.map(toStream);
    },

    async get(endpointId: string): Promise<EventStreamRecord | undefined> {
      const rows = await db.query(
        'GetWebhookEventStream',
        `SELECT ${STREAM_COLUMNS} FROM webhook_event_streams WHERE endpoint_id = $1`,
        [endpointId],
      );
      return rows[0] ? toStream(rows[0]) : undefined;
    },

    /**
     * Records the delivery about to be sent and extends the lease; false when the walk moved on
     * without this instance (then nothing is sent). Persisted before sending: a crash mid-send
     * retries the same delivery (same webhook-id, same events).
     */
    async begin(
      endpointId: string,
      owner: string,
      leaseMs: number,
      delivery: {
        deliveryId: string;
        from: EventPosition;
        through: EventPosition;
        retry: boolean;
        scope: string;
        /** A retry read under another scope: the id it goes out under instead of this one. */
        replaces?: string | undefined;
      },
    ): Promise<boolean> {
      const rows = await db.query(
        'BeginWebhookEventDelivery',
        `UPDATE webhook_event_streams SET pending_delivery_id = $3, pending_through_ts = $4,
           pending_through_seq = $5, lease_until = clock_timestamp() + make_interval(secs => $6::float8),
           pending_scope = $10
         WHERE endpoint_id = $1 AND lease_owner = $2 AND (CASE WHEN $9::boolean
           THEN pending_delivery_id = coalesce($11::uuid, $3)
           ELSE pending_delivery_id IS NULL AND (position_ts, position_seq) = ($7::timestamptz, $8::bigint) END)
         RETURNING endpoint_id`,
        [
          endpointId,
          owner,
          delivery.deliveryId,
          delivery.through.ts,
          delivery.through.seq,
          leaseMs / 1000,
          delivery.from.ts,
          delivery.from.seq,
          delivery.retry,
          delivery.scope,
          delivery.replaces ?? null,
        ],
      );
      return rows.length > 0;
    },

    /**
     * The receiver acknowledged the pending delivery (or it had nothing left to carry, `outcome`
     * null): the endpoint's stream row moves to the delivery's end, an outbox position
     * (acknowledge.ts says what the statement does). `release`: caught up, so the lease ends and
     * the walk waits `spacingMs`.
     */
    async acknowledge(
      endpointId: string,
      owner: string,
      deliveryId: string,
      outcome: AttemptOutcome | null,
      release: { spacingMs: number } | null = null,
    ): Promise<boolean> {
      const rows = await db.query(
        'AcknowledgeWebhookEventDelivery',
        ACKNOWLEDGE,
        acknowledgeParams(endpointId, owner, deliveryId, outcome, release),
      );
      return Number(rows[0]?.moved) > 0;
    },

    /** Nothing for this endpoint to send: the position may pass `to` (advanceSql says why and how). */
    async advance(
      endpointId: string,
      owner: string,
      to: EventPosition | null,
      spacingMs: number,
    ): Promise<void> {
      await db.query('AdvanceWebhookEventPosition', ADVANCE, [
        endpointId,
        owner,
        to?.ts ?? null,
        to?.seq ?? null,
        spacingMs / 1000,
      ]);
    },

    /**
     * A failed attempt: the next at `outcome.nextAttemptAt`, or, with `disableReason`, the
     * endpoint disabled (pass the transaction of its audit entry). Logged with the attempt.
     */
    async fail(
      endpointId: string,
      owner: string,
      outcome: AttemptOutcome,
      disableReason: string | null,
      tx: Queryable = db,
    ): Promise<boolean> {
      const rows = await tx.query(
        'FailWebhookEventDelivery',
        `UPDATE webhook_event_streams SET pending_attempt = $3, failing_since = coalesce(failing_since, now()),
           next_attempt_at = coalesce($4, now())
         WHERE endpoint_id = $1 AND lease_owner = $2 AND pending_delivery_id = $5 RETURNING endpoint_id`,
        [endpointId, owner, outcome.attempt, outcome.nextAttemptAt, outcome.deliveryId],
      );
      if (rows.length === 0) return false;
      if (disableReason !== null) {
        await tx.query(
          'DisableWebhookEndpointForEvents',
          `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = $2, updated_at = now()
           WHERE id = $1 AND enabled`,
          [endpointId, disableReason],
        );
      }
      await log.recordAttempt(endpointId, outcome, tx);
      return true;
    },

    /** Ends the lease, so another instance (or this one) may claim the walk at once. */
    async release(endpointId: string, owner: string): Promise<void> {
      await db.query(
        'ReleaseWebhookEventLease',
        'UPDATE webhook_event_streams SET lease_owner = NULL, lease_until = NULL WHERE endpoint_id = $1 AND lease_owner = $2',
        [endpointId, owner],
      );
    },

    /** Not now (the partner is disabled or lost a scope, or a round failed): looked at again at `until`. */
    async postpone(endpointId: string, owner: string, until: Date): Promise<void> {
      await db.query(
        'PostponeWebhookEventStream',
        'UPDATE webhook_event_streams SET next_attempt_at = $3 WHERE endpoint_id = $1 AND lease_owner = $2',
        [endpointId, owner, until],
      );
    },
  };
}

export type WebhookEventStreamStore = ReturnType<typeof webhookEventStreamStore>;
