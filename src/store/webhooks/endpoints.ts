import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.js';
import type { Position } from '../listings/reads.js';
import {
  COLUMNS,
  DISABLED_BY_PARTNER,
  type EndpointPatch,
  type EndpointRecord,
  type NewEndpoint,
  toRecord,
} from './rows.js';

/** Webhook endpoints as partners and operators manage them: create, read, change, disable, remove. */
export function webhookEndpointStore(db: Queryable) {
  return {
    /** A new endpoint, its walk of listings and of events both starting at `start`. */
    async create(input: NewEndpoint, start: Position, tx: Queryable = db): Promise<EndpointRecord> {
      const rows = await tx.query(
        'CreateWebhookEndpoint',
        `WITH created AS (
           INSERT INTO webhook_endpoints (id, partner_id, url, description, filter_statuses, filter_profile_ids,
             secret, position_ts, position_id, events, test)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *),
         stream AS (
           INSERT INTO webhook_event_streams (endpoint_id, position_ts, position_seq)
           SELECT id, position_ts, 0 FROM created)
         SELECT ${COLUMNS} FROM created`,
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
          input.events,
          input.test,
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

    /**
     * Every endpoint of one partner (null: of all partners) in one mode (null: both), oldest
     * first. A partner lists its live and its test endpoints apart (docs/test-mode.md).
     */
    async list(
      partnerId: string | null,
      test: boolean | null,
      tx: Queryable = db,
    ): Promise<EndpointRecord[]> {
      const rows = await tx.query(
        'ListWebhookEndpoints',
        `SELECT ${COLUMNS} FROM webhook_endpoints
         WHERE ($1::uuid IS NULL OR partner_id = $1) AND ($2::boolean IS NULL OR test = $2)
         ORDER BY created_at, id`,
        [partnerId, test],
      );
      return rows.map(toRecord);
    },

    /**
     * Every live endpoint's state in four counts (the operator's overview). Test endpoints are
     * left out: a partner's test receiver that fails is theirs to mend, not an incident.
     */
    async summary(): Promise<{ enabled: number; disabled: number; failing: number; pending: number }> {
      const rows = await db.query(
        'WebhookSummary',
        `SELECT count(*) FILTER (WHERE enabled)::int AS enabled, count(*) FILTER (WHERE NOT enabled)::int AS disabled,
                count(*) FILTER (WHERE enabled AND failing_since IS NOT NULL)::int AS failing,
                count(*) FILTER (WHERE pending_delivery_id IS NOT NULL)::int AS pending
         FROM webhook_endpoints WHERE NOT test`,
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

    /**
     * Changes an endpoint. `restart`: a walk it subscribes to again starts at this position, not
     * where it stopped when it unsubscribed (listings: the walk of listings; events: the outbox's).
     */
    async update(
      id: string,
      patch: EndpointPatch,
      tx: Queryable = db,
      restart: { listings?: Position; events?: string } = {},
    ): Promise<EndpointRecord | undefined> {
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
      if (patch.events !== undefined) set('events', patch.events);
      if (restart.listings) {
        set('position_ts', restart.listings.ts);
        set('position_id', restart.listings.id);
      }
      // A pending delivery is the stretch read under the filter it was first sent with: retried
      // under another filter it could hold more than a delivery carries, and acknowledging it
      // would move the position past what it left out. The next delivery starts from the
      // position instead, under the new filter and a new id; its failure streak goes on (its
      // attempts too: acknowledge.ts).
      if (restart.listings || patch.filterStatuses !== undefined || patch.filterProfileIds !== undefined) {
        sets.push(`pending_delivery_id = NULL, pending_through_ts = NULL, pending_through_id = NULL, pending_scope = NULL,
          pending_attempt = ${restart.listings ? '0' : 'pending_attempt'}`);
      }
      if (patch.enabled === false) {
        params.push(DISABLED_BY_PARTNER);
        sets.push(`enabled = false, disabled_at = coalesce(disabled_at, now()),
          disabled_reason = CASE WHEN enabled THEN $${params.length} ELSE disabled_reason END`);
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
      if (!rows[0]) return undefined;
      if (restart.events) await restartEvents(tx, id, restart.events);
      else if (
        patch.events !== undefined ||
        patch.filterStatuses !== undefined ||
        patch.filterProfileIds !== undefined
      ) {
        await forgetPendingEvents(tx, id);
      }
      if (patch.enabled === true) await freshEventStreak(tx, id);
      return toRecord(rows[0]);
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
     * An enabled endpoint's walks in a failure streak, of listings and of events, are due now (the
     * streak and its attempt count go on); undefined when the endpoint is disabled or neither
     * walk is failing. A streak, not a pending delivery: a filter change forgets the delivery and
     * the streak goes on, its next delivery waiting out the back-off. The walk of events used to
     * be left out: an endpoint failing on its events answered "nothing to retry".
     */
    async retryNow(id: string, tx: Queryable = db): Promise<EndpointRecord | undefined> {
      const events = await tx.query(
        'RetryWebhookEventsNow',
        `UPDATE webhook_event_streams s SET next_attempt_at = now()
         FROM webhook_endpoints e
         WHERE s.endpoint_id = $1 AND e.id = s.endpoint_id AND e.enabled AND s.failing_since IS NOT NULL
         RETURNING s.endpoint_id`,
        [id],
      );
      const rows = await tx.query(
        'RetryWebhookNow',
        `UPDATE webhook_endpoints SET updated_at = now(),
           next_attempt_at = CASE WHEN failing_since IS NOT NULL THEN now() ELSE next_attempt_at END
         WHERE id = $1 AND enabled AND (failing_since IS NOT NULL OR $2)
         RETURNING ${COLUMNS}`,
        [id, events.length > 0],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
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
           pending_scope = CASE WHEN $2::timestamptz IS NULL THEN pending_scope END,
           pending_attempt = CASE WHEN $2::timestamptz IS NULL THEN pending_attempt ELSE 0 END
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, position?.ts ?? null, position?.id ?? null],
      );
      if (!rows[0]) return undefined;
      await freshEventStreak(tx, id);
      return toRecord(rows[0]);
    },
  };
}

/** The endpoint's walk of events starts again at `ts`: nothing in flight, no streak. */
async function restartEvents(tx: Queryable, id: string, ts: string): Promise<void> {
  await tx.query(
    'RestartWebhookEvents',
    `UPDATE webhook_event_streams SET position_ts = $2, position_seq = 0, pending_delivery_id = NULL, pending_scope = NULL,
       pending_through_ts = NULL, pending_through_seq = NULL, pending_attempt = 0, failing_since = NULL,
       next_attempt_at = now()
     WHERE endpoint_id = $1`,
    [id, ts],
  );
}

/** Enabled again: the walk of events goes on from where it stopped, at once, with a fresh retry period. */
async function freshEventStreak(tx: Queryable, id: string): Promise<void> {
  await tx.query(
    'FreshWebhookEventStreak',
    'UPDATE webhook_event_streams SET failing_since = NULL, next_attempt_at = now() WHERE endpoint_id = $1',
    [id],
  );
}

/**
 * The subscription or the filter changed: a delivery of events in flight is read again from the
 * walk (a new webhook-id; the events keep their ids), so no delivery mixes types, carries one
 * unsubscribed, or passes over one the new filter takes. Its failure streak goes on, attempts
 * too (acknowledge.ts), as for the walk of listings.
 */
async function forgetPendingEvents(tx: Queryable, id: string): Promise<void> {
  await tx.query(
    'ForgetPendingWebhookEvents',
    `UPDATE webhook_event_streams SET pending_delivery_id = NULL, pending_through_ts = NULL, pending_scope = NULL,
       pending_through_seq = NULL
     WHERE endpoint_id = $1`,
    [id],
  );
}
