import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.js';
import type { Mode } from './listings/mode.js';

/**
 * The outbox of events webhook endpoints subscribe to (migration 019, docs/webhooks.md). The event
 * types and their payloads are listed in domain/events/registry.ts; this module stores and reads
 * the rows and knows nothing of what they mean.
 */

/** One event to record: its type (a registry name), the listing it is about, its own fields. */
export interface NewEvent {
  type: string;
  listingId: string;
  /** The type's own fields, JSON-serialisable (registry.ts has each type's schema). */
  data: Record<string, unknown>;
}

/**
 * Records events in the transaction `tx` of the change that causes them: they are delivered if
 * and only if it commits, at least once, in order per listing. Set-based (two statements however
 * many rows). Takes the row lock of each listing concerned (the change holds it already, as a
 * rule): events of one listing are then stamped and numbered in commit order, which their walk
 * relies on (migration 019). Returns the events' ids. Throws when a listing does not exist.
 * `locked`: the caller holds every listing's row lock already (a partner's write took FOR UPDATE
 * before changing them): the events then cost one statement.
 */
export async function recordEvents(
  tx: Queryable,
  rows: readonly NewEvent[],
  { locked = false }: { locked?: boolean } = {},
): Promise<string[]> {
  if (rows.length === 0) return [];
  const ids = rows.map(() => randomUUID());
  const listingIds = rows.map((r) => r.listingId);
  // Sorted by id: two transactions locking the same listings take them in the same order.
  if (!locked)
    await tx.query(
      'LockEventListings',
      `SELECT id FROM listings WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [[...new Set(listingIds)]],
    );
  const inserted = await tx.query<{ n: number }>(
    'RecordEvents',
    `WITH added AS (
       INSERT INTO events (id, stamp, type, listing_id, partner_id, profile_id, status, external_reference, data, test)
       SELECT r.id,
              -- Never before the listing's previous event: its events stay in commit order.
              greatest(write_stamp(), (SELECT max(e.stamp) FROM events e WHERE e.listing_id = r.listing_id)),
              r.type, r.listing_id, l.partner_id, l.dealer_profile_id, l.status, l.external_reference,
              r.data::jsonb, l.test
       FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[]) WITH ORDINALITY AS r(id, type, listing_id, data, ord)
       JOIN listings l ON l.id = r.listing_id
       ORDER BY r.ord
       RETURNING 1)
     SELECT count(*)::int AS n FROM added`,
    [ids, rows.map((r) => r.type), listingIds, rows.map((r) => JSON.stringify(r.data))],
  );
  if (inserted[0]?.n !== rows.length) {
    throw new Error(`recordEvents: ${rows.length - (inserted[0]?.n ?? 0)} event(s) name no listing`);
  }
  return ids;
}

/** An event as stored, read for delivery. */
export interface EventRecord {
  id: string;
  type: string;
  listingId: string;
  externalReference: string;
  occurredAt: string;
  data: Record<string, unknown>;
  position: EventPosition;
}

/** A place in the outbox's walk: (stamp to the microsecond, seq). */
export interface EventPosition {
  ts: string;
  seq: string;
}

const TS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The events' reads: a stretch of the walk for one endpoint, and pruning. */
export function eventStore(db: Queryable) {
  return {
    recordEvents: (rows: readonly NewEvent[], tx: Queryable = db) => recordEvents(tx, rows),

    /**
     * Events after `after` (and up to `through` when given, for a retry), of `types`, of a dealer
     * profile in `profileIds` (null: any) and a status in `statuses` (null: any), in walk order.
     * `horizon`: each row says whether it is settled (behind it), as listing pages do.
     */
    async page(
      filter: {
        /** Live events, or one partner's test events (docs/test-mode.md). */
        mode: Mode;
        types: readonly string[];
        profileIds: readonly string[] | null;
        statuses: readonly string[] | null;
      },
      limit: number,
      range: { after: EventPosition; through: EventPosition | null; horizon: string | null },
    ): Promise<(EventRecord & { settled: boolean })[]> {
      const rows = await db.query(
        'EventPage',
        `SELECT id, type, listing_id, external_reference, data::text AS data, seq::text AS seq,
                ${TS('stamp')} AS ts, ($7::timestamptz IS NULL OR stamp < $7::timestamptz) AS settled
         FROM events
         WHERE (stamp, seq) > ($1::timestamptz, $2::bigint)
           AND ($3::timestamptz IS NULL OR (stamp, seq) <= ($3::timestamptz, $4::bigint))
           AND type = ANY($5::text[])
           AND ($6::uuid[] IS NULL OR profile_id = ANY($6::uuid[]))
           AND ($8::text[] IS NULL OR status = ANY($8::text[]))
           -- A live walk never reads a test event, a test walk only its partner's (docs/test-mode.md).
           AND test = $10 AND (NOT test OR partner_id = $11::uuid)
         ORDER BY stamp, seq LIMIT $9`,
        [
          range.after.ts,
          range.after.seq,
          range.through?.ts ?? null,
          range.through?.seq ?? null,
          filter.types,
          filter.profileIds,
          range.horizon,
          filter.statuses,
          limit,
          filter.mode.test,
          filter.mode.test ? filter.mode.partnerId : null,
        ],
      );
      return rows.map((row) => ({
        id: row.id as string,
        type: row.type as string,
        listingId: row.listing_id as string,
        externalReference: row.external_reference as string,
        occurredAt: `${(row.ts as string).slice(0, 23)}Z`,
        data: JSON.parse(row.data as string) as Record<string, unknown>,
        position: { ts: row.ts as string, seq: row.seq as string },
        settled: row.settled as boolean,
      }));
    },

    /** Drops events older than `days` (every endpoint has had them for that long, or never will). */
    async prune(days: number): Promise<void> {
      await db.query(
        'PruneEvents',
        'DELETE FROM events WHERE created_at < now() - make_interval(days => $1)',
        [days],
      );
    },
  };
}

export type EventStore = ReturnType<typeof eventStore>;
