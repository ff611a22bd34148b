import { randomUUID } from 'node:crypto';
import type { Projection } from '../../store/db.js';
import type { DealerStore } from '../../store/dealers.js';
import type { ListingJson } from '../../store/listings/json.js';
import type { ListingFilter, ListingReadStore, PageRow, Position } from '../../store/listings/reads.js';
import type { PartnerStore } from '../../store/partners.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import { type EndpointRecord, NIL_UUID } from '../../store/webhooks/index.js';
import { endpointMode } from '../access.js';
import { endpointScope, retryIdentity, scopeKey } from './scope.js';

/** At most this many listings per delivery (the contract's limit). */
export const BATCH_SIZE = 100;

/** A delivery to send: a stretch of the endpoint's walk, each listing as its stored JSON text. */
export interface Delivery {
  deliveryId: string;
  through: Position;
  attempt: number;
  listings: PageRow<ListingJson>[];
  /** The pending delivery again (same stretch), not a new one. */
  retry: boolean;
  /** What it was read under (scopeKey), kept with it while it waits for a retry. */
  scope: string;
  /**
   * A retry read under another scope than its first attempt (the partner's access widened, a
   * dealer moved): it goes out under a new id, replacing the pending one's.
   */
  replaces?: string | undefined;
}

/**
 * What an endpoint is sent next. An endpoint is a sync cursor the service keeps: each delivery is
 * the next page of the settled (updatedAt, id) walk after its position, inside the partner's scope
 * and the endpoint's filter (docs/webhooks.md).
 */
export function deliveryWalk(deps: {
  listings: Pick<ListingReadStore, 'page'>;
  syncHorizon: Pick<SyncHorizonStore, 'current'>;
  partners: Pick<PartnerStore, 'get'>;
  dealers: Pick<DealerStore, 'subtree'>;
  /** Listings as GET /listings/{id} sends them: the stored read model's JSON text. */
  listingJson: Projection<ListingJson>;
}) {
  /**
   * The listings an endpoint may carry now: the partner's scope as it is, narrowed by the filter.
   * Null while the partner is disabled or lacks a scope.
   */
  async function filterOf(endpoint: EndpointRecord): Promise<ListingFilter | null> {
    const scope = await endpointScope(deps, endpoint);
    if (!scope) return null;
    return {
      // A test endpoint walks its partner's test listings, a live one live listings (docs/test-mode.md).
      mode: endpointMode(endpoint),
      profileIds: scope.profileIds,
      status: scope.statuses,
      updatedSince: null,
      partnerId: null,
      reference: null,
    };
  }

  /** The next delivery to send, or, when there is none, how far the position may pass meanwhile. */
  async function nextDelivery(
    endpoint: EndpointRecord,
    filter: ListingFilter,
  ): Promise<Delivery | { advanceTo: Position | null }> {
    const after = endpoint.position;
    const scope = scopeKey({ ...filter });
    if (endpoint.pending) {
      // A retry carries the same stretch of the walk, each listing in its state now. One that
      // changed since has moved past the stretch: the deliveries after this one carry it.
      // The stretch may hold more than a delivery carries when the partner's scope widened since
      // (an operator's change): then this retry ends at its last listing, so that acknowledging
      // it never moves the position past listings it left out; they follow in the next delivery.
      const rows = await deps.listings.page(filter, 'updatedAt', BATCH_SIZE + 1, 0, {
        after,
        through: endpoint.pending.through,
        horizon: null,
        projection: deps.listingJson,
      });
      const over = rows.length > BATCH_SIZE;
      if (over) rows.length = BATCH_SIZE;
      return {
        ...retryIdentity(endpoint.pending, scope),
        through: over ? rows[BATCH_SIZE - 1]!.position : endpoint.pending.through,
        attempt: endpoint.pending.attempt + 1,
        listings: rows,
        retry: true,
        scope,
      };
    }
    // The horizon first, in a statement of its own (store/sync-horizon.ts says why).
    const horizon = await deps.syncHorizon.current();
    const rows = await deps.listings.page(filter, 'updatedAt', BATCH_SIZE, 0, {
      after,
      horizon,
      projection: deps.listingJson,
    });
    const firstUnsettled = rows.findIndex((r) => !r.settled);
    const settled = firstUnsettled === -1 ? rows : rows.slice(0, firstUnsettled);
    if (settled.length === 0) {
      // Nothing of the filter lies between the position and the horizon: the position may pass
      // up to it, so the next look starts there rather than at a position far behind.
      const passable = horizon !== '-infinity' && horizon > after.ts;
      return { advanceTo: passable ? { ts: horizon, id: NIL_UUID } : null };
    }
    return {
      deliveryId: randomUUID(),
      through: settled[settled.length - 1]!.position,
      // Within a failure streak (a retry found nothing left to carry) the attempts go on.
      attempt: endpoint.streakAttempts + 1,
      listings: settled,
      retry: false,
      scope,
    };
  }

  return { filterOf, nextDelivery };
}
