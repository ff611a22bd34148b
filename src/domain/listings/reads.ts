import type { Projection } from '../../store/db.js';
import type { DealerStore } from '../../store/dealers.js';
import type { ListingFilter, ListingReadStore, Sort } from '../../store/listings/reads.js';
import type { StoredListing } from '../../store/listings/rows.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import { type Access, assertInScope, inScope, type Mode, modeOf, narrow } from '../access.js';
import { type CursorCodec, filterParts, fingerprint, invalidCursor } from '../cursor.js';
import type { DealerLookup } from '../dealer-lookup.js';
import { profileForbidden } from '../errors.js';
import { messages } from '../messages.js';

export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

interface ListingReadDeps {
  /** Dealers named by id or location code (kept by the instance), and a profile's subtree. */
  dealers: DealerLookup & Pick<DealerStore, 'subtree'>;
  listings: ListingReadStore;
  cursors: CursorCodec;
  syncHorizon: Pick<SyncHorizonStore, 'current'>;
}

/** Reading listings: GET /listings, GET /listings/{id} and a location's listings. */
export function listingReads(deps: ListingReadDeps) {
  return {
    filter: (
      partner: { id: string; test: boolean; access: Access },
      query: ListingQuery,
      extra?: readonly (readonly string[])[],
    ) => listingFilter(deps, partner, query, extra),
    /** `projection`: what each listing is read as (the stored listing unless the caller says). */
    page: <T = StoredListing>(
      filter: ListingFilter,
      query: ListingQuery,
      options: { context?: string; projection?: Projection<T> } = {},
    ) => listingPage(deps, filter, query, options.context, options.projection),
    get: <T = StoredListing>(id: string, mode: Mode, projection?: Projection<T>) =>
      deps.listings.get(id, mode, projection),
  };
}

export type ListingReads = ReturnType<typeof listingReads>;

/** A listing list request after aliases are resolved and values parsed. */
export interface ListingQuery {
  page: number;
  pageSize: number;
  status: 'active' | 'pending' | 'sold' | 'draft' | 'all';
  updatedSince: Date | undefined;
  sort: Sort;
  /** Profiles the request narrows to; each entry is one filter, all of them apply. */
  dealerIds: string[];
  parentDealerId: string | undefined;
  locationCode: string | undefined;
  /** A nextCursor from an earlier page: continue strictly after it (page is then ignored). */
  cursor: string | undefined;
  /** Only the listings the requesting partner wrote. */
  mine: boolean;
  /** Only the requesting partner's listing with this reference (0 or 1 row). */
  externalReference: string | undefined;
  /** Only live listings, or only those that are not (docs/images.md, "Readiness"). */
  readiness?: 'live' | 'not_live' | undefined;
  /** Only listings with at least one image in this check state. */
  imageState?: string | undefined;
}

/**
 * Turns a list request into the store's filter: the partner's scope, narrowed by each dealer
 * filter. Every profile a filter names must be inside the scope (PROFILE_FORBIDDEN otherwise);
 * an unknown one is refused the same way, so ids cannot be probed.
 */
async function listingFilter(
  deps: ListingReadDeps,
  partner: { id: string; test: boolean; access: Access },
  query: ListingQuery,
  extra: readonly (readonly string[])[] = [],
): Promise<ListingFilter> {
  const { id: partnerId, access } = partner;
  const sets: (readonly string[])[] = [...extra];
  if (query.dealerIds.length) {
    await assertKnownInScope(deps, access, query.dealerIds);
    for (const id of query.dealerIds) sets.push([id]);
  }
  if (query.parentDealerId) {
    await assertKnownInScope(deps, access, [query.parentDealerId]);
    sets.push(await deps.dealers.subtree([query.parentDealerId]));
  }
  if (query.locationCode) {
    const id = (await deps.dealers.idsByCodes([query.locationCode])).get(query.locationCode.toLowerCase());
    // An unknown code and another tree's code get one answer, naming no id, so codes cannot be probed.
    if (!id || !inScope(access, id))
      throw profileForbidden(messages.locationCodeNotInScope(query.locationCode));
    sets.push([id]);
  }
  return {
    mode: modeOf(partner),
    profileIds: narrow(access, sets),
    status: query.status === 'all' ? null : query.status,
    updatedSince: query.updatedSince ?? null,
    // A reference is only ever this partner's own: references are namespaced per partner.
    partnerId: query.mine || query.externalReference !== undefined ? partnerId : null,
    reference: query.externalReference ?? null,
    readiness: query.readiness ?? null,
    imageState: query.imageState ?? null,
  };
}

async function assertKnownInScope(deps: ListingReadDeps, access: Access, ids: string[]): Promise<void> {
  assertInScope(access, ids);
  // A global partner's scope contains every id, including ones that do not exist.
  if (access.scope === 'global') {
    const known = await deps.dealers.existing(ids);
    assertInScope({ scope: 'restricted', rootProfileIds: [], profileIds: [...known] }, ids);
  }
}

/**
 * One page of a listing list, with its pagination block. Sorted by updatedAt (the default), the
 * page also carries a sync cursor: `nextCursor` points after the last listing that lies behind
 * the commit horizon, so no write still open can ever land behind it (docs/sync.md). Listings
 * newer than the horizon are shown but not passed: the next page shows them again. `hasMore` is
 * false only when no listing of the filter lies after `nextCursor`, so a walk never stops short.
 */
async function listingPage<T>(
  deps: ListingReadDeps,
  filter: ListingFilter,
  query: ListingQuery,
  context = '',
  projection?: Projection<T>,
) {
  const syncing = query.sort === 'updatedAt';
  const filters = {
    context,
    status: query.status,
    updatedSince: query.updatedSince?.toISOString() ?? null,
    dealerIds: [...query.dealerIds].sort(),
    parentDealerId: query.parentDealerId ?? null,
    locationCode: query.locationCode?.toLowerCase() ?? null,
    mine: query.mine,
    externalReference: query.externalReference ?? null,
    // Only when set: a cursor issued before these filters existed still matches its filters.
    ...(query.readiness ? { readiness: query.readiness } : {}),
    ...(query.imageState ? { imageState: query.imageState } : {}),
    // A test walk's cursor is refused by a live request, and the reverse (docs/test-mode.md).
    ...(filter.mode.test ? { mode: 'test' } : {}),
  };
  const print = fingerprint(filters);
  const parts = filterParts(filters);
  if (query.cursor !== undefined && !syncing) {
    throw invalidCursor(messages.cursorNeedsUpdatedAt());
  }
  const after = query.cursor !== undefined ? deps.cursors.decode(query.cursor, print, parts) : null;
  const offset = query.cursor !== undefined ? 0 : (query.page - 1) * query.pageSize;
  const readPage = async () => {
    // The horizon is read first, in a statement of its own: the page's snapshot is then taken
    // after it and holds every commit behind it (store/sync-horizon.ts says why).
    const horizon = syncing ? await deps.syncHorizon.current() : null;
    // One row more than shown tells whether anything follows the page. The total comes with it
    // (in the same statement when the counters give it: store/listings/reads.ts, pageWithTotal).
    const limit = syncing ? query.pageSize + 1 : query.pageSize;
    return deps.listings.pageWithTotal(filter, query.sort, limit, offset, { after, horizon, projection });
  };
  const { rows: fetched, total: totalItems } = await readPage();
  const rows = fetched.slice(0, query.pageSize);
  const pagination = {
    page: query.cursor !== undefined ? 1 : query.page,
    pageSize: query.pageSize,
    totalItems,
    totalPages: Math.ceil(totalItems / query.pageSize),
  };
  if (!syncing) return { data: rows.map((r) => r.listing), pagination };
  // Rows come in updatedAt order, so the settled ones are a prefix of the page.
  const settledCount = rows.findIndex((r) => !r.settled);
  const passed = settledCount === -1 ? rows.length : settledCount;
  const resumeFrom =
    passed > 0
      ? rows[passed - 1]!.position
      : query.cursor !== undefined
        ? after
        : offset === 0
          ? null
          : undefined;
  return {
    data: rows.map((r) => r.listing),
    pagination: {
      ...pagination,
      // A page-number request deep in the list without a settled row has no safe position to give.
      ...(resumeFrom !== undefined ? { nextCursor: deps.cursors.encode(resumeFrom, print, parts) } : {}),
      // Everything fetched after the last passed row (the extra row included) lies after the cursor.
      hasMore: fetched.length > passed,
    },
  };
}
