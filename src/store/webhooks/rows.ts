import type { Position } from '../listings/reads.js';

/**
 * The webhook tables' rows as the service reads them: endpoints (with their walk and lease) and
 * the delivery log. The three stores beside this file share them.
 */

/** A webhook endpoint as stored; the partner never sees the secrets again after issuing. */
export interface EndpointRecord {
  id: string;
  partnerId: string;
  /** Registered with a test secret: walks its partner's test data only (docs/test-mode.md). */
  test: boolean;
  url: string;
  description: string | null;
  filterStatuses: string[] | null;
  filterProfileIds: string[] | null;
  /** The event types it subscribes to (domain/events/registry.ts). */
  events: string[];
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
  pending: { deliveryId: string; through: Position; attempt: number; scope: string | null } | null;
  failingSince: string | null;
  /** Attempts so far in the failure streak (0 without one): a new delivery goes on counting. */
  streakAttempts: number;
  nextAttemptAt: string;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptRecord {
  id: string;
  endpointId: string;
  deliveryId: string;
  /** An event type of the registry, or `ping`. */
  type: string;
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
  test: boolean;
  url: string;
  description: string | null;
  filterStatuses: string[] | null;
  filterProfileIds: string[] | null;
  events: string[];
  secret: string;
}

export interface EndpointPatch {
  url?: string | undefined;
  description?: string | null | undefined;
  filterStatuses?: string[] | null | undefined;
  filterProfileIds?: string[] | null | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
}

/** An attempt's outcome, as the dispatcher records it. */
export interface AttemptOutcome {
  deliveryId: string;
  type: string;
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

export const COLUMNS = `id, partner_id, url, description, filter_statuses, filter_profile_ids, events, enabled,
  disabled_reason, disabled_at, held_by_operator, secret, previous_secret, previous_secret_expires_at,
  ${TS('position_ts')} AS position_ts, position_id, pending_delivery_id,
  ${TS('pending_through_ts')} AS pending_through_ts, pending_through_id, pending_attempt, pending_scope,
  failing_since, next_attempt_at, created_at, updated_at, test`;

export const iso = (value: unknown) => (value ? (value as Date).toISOString() : null);

export function toRecord(row: Record<string, unknown>): EndpointRecord {
  return {
    id: row.id as string,
    partnerId: row.partner_id as string,
    test: row.test as boolean,
    url: row.url as string,
    description: row.description as string | null,
    filterStatuses: row.filter_statuses as string[] | null,
    filterProfileIds: row.filter_profile_ids as string[] | null,
    events: row.events as string[],
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
          scope: row.pending_scope as string | null,
        }
      : null,
    failingSince: iso(row.failing_since),
    streakAttempts: row.failing_since ? (row.pending_attempt as number) : 0,
    nextAttemptAt: iso(row.next_attempt_at)!,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

export function toAttempt(row: Record<string, unknown>): AttemptRecord {
  return {
    id: row.id as string,
    endpointId: row.endpoint_id as string,
    deliveryId: row.delivery_id as string,
    type: row.type as string,
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

export const ATTEMPT_COLUMNS = `*, ${TS('created_at')} AS created_ts`;

/** The lowest uuid: a position (ts, NIL) lies before every listing stamped ts. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** The reason an endpoint its partner switched off (enabled: false) carries. */
export const DISABLED_BY_PARTNER = 'disabled by the partner';
