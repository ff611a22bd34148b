import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.js';
import type { Position } from './listings-read.js';

/** A webhook endpoint as stored; the partner never sees the secrets again after issuing. */
export interface EndpointRecord {
  id: string;
  partnerId: string;
  url: string;
  description: string | null;
  filterStatuses: string[] | null;
  filterProfileIds: string[] | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  /** Disabled by the operator: only the operator enables it again. */
  heldByOperator: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  /** After the last listing the receiver acknowledged. */
  position: Position;
  /** The delivery sent and not yet acknowledged: it is retried, nothing passes it. */
  pending: { deliveryId: string; through: Position; attempt: number } | null;
  failingSince: string | null;
  nextAttemptAt: string;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptRecord {
  id: string;
  endpointId: string;
  deliveryId: string;
  type: 'listings.changed' | 'ping';
  attempt: number;
  status: 'succeeded' | 'failed';
  listingCount: number;
  responseCode: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  nextAttemptAt: string | null;
  createdAt: string;
  /** Its place in the log's order (createdAt to the microsecond, id), for paging. */
  position: Position;
}

export interface NewEndpoint {
  partnerId: string;
  url: string;
  description: string | null;
  filterStatuses: string[] | null;
  filterProfileIds: string[] | null;
  secret: string;
}

export interface EndpointPatch {
  url?: string | undefined;
  description?: string | null | undefined;
  filterStatuses?: string[] | null | undefined;
  filterProfileIds?: string[] | null | undefined;
  enabled?: boolean | undefined;
}

/** An attempt's outcome, as the dispatcher records it. */
export interface AttemptOutcome {
  deliveryId: string;
  type: 'listings.changed' | 'ping';
  attempt: number;
  ok: boolean;
  listingCount: number;
  responseCode: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  nextAttemptAt: Date | null;
}

const TS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const COLUMNS = `id, partner_id, url, description, filter_statuses, filter_profile_ids, enabled,
  disabled_reason, disabled_at, held_by_operator, secret, previous_secret, previous_secret_expires_at,
  ${TS('position_ts')} AS position_ts, position_id, pending_delivery_id,
  ${TS('pending_through_ts')} AS pending_through_ts, pending_through_id, pending_attempt,
  failing_since, next_attempt_at, created_at, updated_at`;

/**
 * The dispatcher's claim: due endpoints with something to deliver, leased to `$1` for `$2`
 * seconds, at most `$3`. Exported for the benchmark, which checks its plan on a real dataset.
 */
export const CLAIM_SQL = `UPDATE webhook_endpoints e
   SET lease_owner = $1, lease_until = clock_timestamp() + make_interval(secs => $2::float8)
   WHERE e.id IN (
     SELECT w.id FROM webhook_endpoints w
     WHERE w.enabled AND w.next_attempt_at <= clock_timestamp()
       AND (w.lease_until IS NULL OR w.lease_until < clock_timestamp())
       AND (w.pending_delivery_id IS NOT NULL
            -- A scalar probe with ORDER BY … LIMIT 1, not EXISTS: EXISTS drops the order, and
            -- the planner then seq-scans listings per endpoint (6 s for 100 endpoints at 100k).
            OR (SELECT true FROM listings l WHERE (l.updated_at, l.id) > (w.position_ts, w.position_id)
                ORDER BY l.updated_at, l.id LIMIT 1))
     ORDER BY w.next_attempt_at LIMIT $3
     FOR UPDATE SKIP LOCKED)
   RETURNING ${COLUMNS}`;

const iso = (value: unknown) => (value ? (value as Date).toISOString() : null);

function toRecord(row: Record<string, unknown>): EndpointRecord {
  return {
    id: row.id as string,
    partnerId: row.partner_id as string,
    url: row.url as string,
    description: row.description as string | null,
    filterStatuses: row.filter_statuses as string[] | null,
    filterProfileIds: row.filter_profile_ids as string[] | null,
    enabled: row.enabled as boolean,
    disabledReason: row.disabled_reason as string | null,
    disabledAt: iso(row.disabled_at),
    heldByOperator: row.held_by_operator as boolean,
    secret: row.secret as string,
    previousSecret: row.previous_secret as string | null,
    previousSecretExpiresAt: iso(row.previous_secret_expires_at),
    position: { ts: row.position_ts as string, id: row.position_id as string },
    pending: row.pending_delivery_id
      ? {
          deliveryId: row.pending_delivery_id as string,
          through: { ts: row.pending_through_ts as string, id: row.pending_through_id as string },
          attempt: row.pending_attempt as number,
        }
      : null,
    failingSince: iso(row.failing_since),
    nextAttemptAt: iso(row.next_attempt_at)!,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

function toAttempt(row: Record<string, unknown>): AttemptRecord {
  return {
    id: row.id as string,
    endpointId: row.endpoint_id as string,
    deliveryId: row.delivery_id as string,
    type: row.type as 'listings.changed' | 'ping',
    attempt: row.attempt as number,
    status: row.status as 'succeeded' | 'failed',
    listingCount: row.listing_count as number,
    responseCode: row.response_code as number | null,
    responseBody: row.response_body as string | null,
    error: row.error as string | null,
    durationMs: row.duration_ms as number,
    nextAttemptAt: iso(row.next_attempt_at),
    createdAt: iso(row.created_at)!,
    position: { ts: row.created_ts as string, id: row.id as string },
  };
}

const ATTEMPT_COLUMNS = `*, ${TS('created_at')} AS created_ts`;

/** The lowest uuid: a position (ts, NIL) lies before every listing stamped ts. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export function webhookStore(db: Queryable) {
  return {
    /** A new endpoint starts at `start`: it delivers every listing change after that position. */
    async create(input: NewEndpoint, start: Position, tx: Queryable = db): Promise<EndpointRecord> {
      const rows = await tx.query(
        'CreateWebhookEndpoint',
        `INSERT INTO webhook_endpoints (id, partner_id, url, description, filter_statuses, filter_profile_ids,
           secret, position_ts, position_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
        [
          randomUUID(),
          input.partnerId,
          input.url,
          input.description,
          input.filterStatuses,
          input.filterProfileIds,
          input.secret,
          start.ts,
          start.id,
        ],
      );
      return toRecord(rows[0]!);
    },

    async get(id: string, tx: Queryable = db): Promise<EndpointRecord | undefined> {
      const rows = await tx.query(
        'GetWebhookEndpoint',
        `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1`,
        [id],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    /** Every endpoint of one partner (null: of all partners), oldest first. */
    async list(partnerId: string | null, tx: Queryable = db): Promise<EndpointRecord[]> {
      const rows = await tx.query(
        'ListWebhookEndpoints',
        `SELECT ${COLUMNS} FROM webhook_endpoints WHERE ($1::uuid IS NULL OR partner_id = $1)
         ORDER BY created_at, id`,
        [partnerId],
      );
      return rows.map(toRecord);
    },

    /** Every endpoint's state in four counts (the operator's overview). */
    async summary(): Promise<{ enabled: number; disabled: number; failing: number; pending: number }> {
      const rows = await db.query(
        'WebhookSummary',
        `SELECT count(*) FILTER (WHERE enabled)::int AS enabled, count(*) FILTER (WHERE NOT enabled)::int AS disabled,
                count(*) FILTER (WHERE enabled AND failing_since IS NOT NULL)::int AS failing,
                count(*) FILTER (WHERE pending_delivery_id IS NOT NULL)::int AS pending
         FROM webhook_endpoints`,
      );
      const row = rows[0]!;
      return {
        enabled: Number(row.enabled),
        disabled: Number(row.disabled),
        failing: Number(row.failing),
        pending: Number(row.pending),
      };
    },

    async countForPartner(partnerId: string, tx: Queryable = db): Promise<number> {
      const rows = await tx.query<{ n: number }>(
        'CountWebhookEndpoints',
        'SELECT count(*)::int AS n FROM webhook_endpoints WHERE partner_id = $1',
        [partnerId],
      );
      return rows[0]!.n;
    },

    async update(id: string, patch: EndpointPatch, tx: Queryable = db): Promise<EndpointRecord | undefined> {
      const sets: string[] = [];
      const params: unknown[] = [id];
      const set = (column: string, value: unknown) => {
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      };
      if (patch.url !== undefined) set('url', patch.url);
      if (patch.description !== undefined) set('description', patch.description);
      if (patch.filterStatuses !== undefined) set('filter_statuses', patch.filterStatuses);
      if (patch.filterProfileIds !== undefined) set('filter_profile_ids', patch.filterProfileIds);
      if (patch.enabled === false) {
        sets.push(`enabled = false, disabled_at = coalesce(disabled_at, now()),
          disabled_reason = CASE WHEN enabled THEN 'disabled by the partner' ELSE disabled_reason END`);
      }
      if (patch.enabled === true) {
        // Enabled again: from where it stopped, at once, with a fresh retry period.
        sets.push(`enabled = true, disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
          held_by_operator = false, next_attempt_at = now()`);
      }
      const rows = await tx.query(
        'UpdateWebhookEndpoint',
        `UPDATE webhook_endpoints SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1
         RETURNING ${COLUMNS}`,
        params,
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    /** Disables an endpoint; `hold`: by the operator, so only the operator enables it again. */
    async disable(
      id: string,
      reason: string,
      hold: boolean,
      tx: Queryable = db,
    ): Promise<EndpointRecord | undefined> {
      const rows = await tx.query(
        'DisableWebhookEndpoint',
        `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = $2,
           held_by_operator = $3, updated_at = now()
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, reason, hold],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    async remove(id: string, tx: Queryable = db): Promise<boolean> {
      const rows = await tx.query(
        'DeleteWebhookEndpoint',
        'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id',
        [id],
      );
      return rows.length > 0;
    },

    /** A new signing secret; the current one keeps signing beside it until `graceUntil`. */
    async rotate(id: string, secret: string, graceUntil: Date, tx: Queryable = db) {
      const rows = await tx.query(
        'RotateWebhookSecret',
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $3, secret = $2,
           updated_at = now()
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, secret, graceUntil],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

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
      delivery: { deliveryId: string; from: Position; through: Position; retry: boolean },
    ): Promise<boolean> {
      const rows = await db.query(
        'BeginWebhookDelivery',
        `UPDATE webhook_endpoints SET pending_delivery_id = $3, pending_through_ts = $4, pending_through_id = $5,
           lease_until = clock_timestamp() + make_interval(secs => $6::float8)
         WHERE id = $1 AND lease_owner = $2 AND enabled AND (CASE WHEN $9::boolean
           THEN pending_delivery_id = $3
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
        ],
      );
      return rows.length > 0;
    },

    /**
     * The receiver acknowledged the pending delivery (or it had nothing left to carry): the
     * position moves to its end, the failure streak ends and the attempt is logged, in one
     * statement. Only the lease holder may. `release`: the endpoint is caught up, so the lease ends
     * here too, and it is not claimed again for `spacingMs` (changes arriving meanwhile go
     * together in the next delivery).
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
        `WITH moved AS (
           UPDATE webhook_endpoints SET position_ts = pending_through_ts, position_id = pending_through_id,
             pending_delivery_id = NULL, pending_through_ts = NULL, pending_through_id = NULL, pending_attempt = 0,
             failing_since = NULL,
             next_attempt_at = clock_timestamp() + make_interval(secs => coalesce($5::float8, 0)),
             lease_owner = CASE WHEN $5::float8 IS NULL THEN lease_owner END,
             lease_until = CASE WHEN $5::float8 IS NULL THEN lease_until END
           WHERE id = $1 AND lease_owner = $2 AND pending_delivery_id = $3 RETURNING id),
         logged AS (
           INSERT INTO webhook_attempts (id, endpoint_id, delivery_id, type, attempt, status, listing_count,
             response_code, response_body, error, duration_ms, next_attempt_at)
           SELECT $6, id, $3, $7, $8, 'succeeded', $9, $10, $11, NULL, $12, NULL FROM moved WHERE $4::boolean
           RETURNING id)
         SELECT (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM logged) AS logged`,
        [
          id,
          owner,
          deliveryId,
          outcome !== null,
          release ? release.spacingMs / 1000 : null,
          randomUUID(),
          outcome?.type ?? 'listings.changed',
          outcome?.attempt ?? 0,
          outcome?.listingCount ?? 0,
          outcome?.responseCode ?? null,
          outcome?.responseBody ?? null,
          outcome?.durationMs ?? 0,
        ],
      );
      return Number(rows[0]?.moved) > 0;
    },

    /** Nothing of the filter lies between the position and `to`: the position may pass it. */
    async advance(id: string, owner: string, to: Position): Promise<void> {
      await db.query(
        'AdvanceWebhookPosition',
        `UPDATE webhook_endpoints SET position_ts = $3, position_id = $4
         WHERE id = $1 AND lease_owner = $2 AND pending_delivery_id IS NULL
           AND (position_ts, position_id) < ($3::timestamptz, $4::uuid)`,
        [id, owner, to.ts, to.id],
      );
    },

    /** A failed attempt: the next one at `outcome.nextAttemptAt`, or the endpoint disabled. */
    async fail(id: string, owner: string, outcome: AttemptOutcome, disableReason: string | null) {
      const rows = await db.query(
        'FailWebhookDelivery',
        `UPDATE webhook_endpoints SET pending_attempt = $3, failing_since = coalesce(failing_since, now()),
           next_attempt_at = coalesce($4, now()),
           enabled = enabled AND $5::text IS NULL,
           disabled_at = CASE WHEN $5::text IS NULL THEN disabled_at ELSE now() END,
           disabled_reason = coalesce($5::text, disabled_reason)
         WHERE id = $1 AND lease_owner = $2 AND pending_delivery_id = $6 RETURNING id`,
        [id, owner, outcome.attempt, outcome.nextAttemptAt, disableReason, outcome.deliveryId],
      );
      if (rows.length) await this.recordAttempt(id, outcome);
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

    /** Restarts a disabled endpoint from where it stopped, or from `position` (a replay). */
    async resume(
      id: string,
      position: Position | null,
      tx: Queryable = db,
    ): Promise<EndpointRecord | undefined> {
      const rows = await tx.query(
        'ResumeWebhookEndpoint',
        `UPDATE webhook_endpoints SET enabled = true, disabled_at = NULL, disabled_reason = NULL,
           held_by_operator = false, failing_since = NULL, next_attempt_at = now(), updated_at = now(),
           position_ts = coalesce($2::timestamptz, position_ts), position_id = coalesce($3::uuid, position_id),
           pending_delivery_id = CASE WHEN $2::timestamptz IS NULL THEN pending_delivery_id END,
           pending_through_ts = CASE WHEN $2::timestamptz IS NULL THEN pending_through_ts END,
           pending_through_id = CASE WHEN $2::timestamptz IS NULL THEN pending_through_id END,
           pending_attempt = CASE WHEN $2::timestamptz IS NULL THEN pending_attempt ELSE 0 END
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, position?.ts ?? null, position?.id ?? null],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

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

export type WebhookStore = ReturnType<typeof webhookStore>;
