import type { EventPosition, EventStore } from '../../store/events.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import { type Access, modeOf } from '../access.js';
import { type CursorCodec, fingerprint } from '../cursor.js';
import { fieldProblem } from '../errors.js';
import { OUTBOX_EVENT_TYPES } from './registry.js';

export const MAX_EVENT_PAGE = 100;

/**
 * GET /events: the outbox read by a partner as a webhook endpoint walks it (docs/webhooks.md,
 * "Reading events without an endpoint"): the events of its scope and of `types`, in commit order,
 * only those settled behind the commit horizon, cursor paged. `forecourt listen` forwards them.
 * Without a cursor the walk starts at `since` (default: the oldest event kept).
 */
export function eventFeed(deps: {
  events: Pick<EventStore, 'page'>;
  syncHorizon: Pick<SyncHorizonStore, 'current'>;
  cursors: CursorCodec;
}) {
  return async function eventPage(
    partner: { id: string; test: boolean; access: Access },
    query: {
      types?: readonly string[] | undefined;
      cursor?: string | undefined;
      since?: string | undefined;
      pageSize: number;
    },
  ) {
    const asked = query.types ?? OUTBOX_EVENT_TYPES;
    const unknown = asked.find((t) => !(OUTBOX_EVENT_TYPES as readonly string[]).includes(t));
    if (unknown !== undefined) {
      throw fieldProblem(
        'INVALID_QUERY',
        'query.types',
        `must be one of ${OUTBOX_EVENT_TYPES.join(', ')} (got ${JSON.stringify(unknown)})`,
        'invalid_value',
      );
    }
    const types = OUTBOX_EVENT_TYPES.filter((t) => asked.includes(t));
    // A test walk's cursor is refused by a live request, and the reverse (docs/test-mode.md), as a
    // listing cursor is: the outbox is one, and a position from the other mode would pass events.
    const bound = `events:${fingerprint({ types: types.join(','), ...(partner.test ? { mode: 'test' } : {}) })}`;
    const decoded = query.cursor === undefined ? null : deps.cursors.decode(query.cursor, bound);
    const after: EventPosition = decoded
      ? { ts: decoded.ts, seq: decoded.id }
      : { ts: query.since ?? '-infinity', seq: '0' };
    const pageSize = Math.min(query.pageSize, MAX_EVENT_PAGE);
    // The horizon first, in a statement of its own (store/sync-horizon.ts says why).
    const horizon = await deps.syncHorizon.current();
    const profileIds = partner.access.scope === 'global' ? null : partner.access.profileIds;
    // One more than a page: whether anything lies after the cursor (as listing pages do).
    const fetched = await deps.events.page(
      { mode: modeOf(partner), types, profileIds, statuses: null },
      pageSize + 1,
      {
        after,
        through: null,
        horizon,
      },
    );
    const rows = fetched.slice(0, pageSize);
    const firstUnsettled = rows.findIndex((r) => !r.settled);
    const settled = firstUnsettled === -1 ? rows : rows.slice(0, firstUnsettled);
    const last = settled[settled.length - 1];
    // Nothing settled: the cursor may still pass up to the horizon (nothing of this scope lies before it).
    const next: EventPosition =
      last?.position ?? (horizon !== '-infinity' && horizon > after.ts ? { ts: horizon, seq: '0' } : after);
    return {
      data: settled.map((e) => ({
        id: `evt_${e.id}`,
        type: e.type,
        occurredAt: e.occurredAt,
        listingId: e.listingId,
        externalReference: e.externalReference,
        ...e.data,
      })),
      pagination: {
        pageSize,
        // False only when nothing lies after nextCursor: an event of a write still open (not yet
        // passed) counts, so a walk that stops at false misses none (docs/webhooks.md).
        hasMore: fetched.length > settled.length,
        nextCursor: deps.cursors.encode({ ts: next.ts, id: next.seq }, bound),
      },
    };
  };
}

export type EventPage = ReturnType<typeof eventFeed>;
