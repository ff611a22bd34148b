import type { Projection } from '../store/db.js';
import type { Dealer, DealerPosition, DealerStore } from '../store/dealers.js';
import type { LocationStats, LocationStatsStore } from '../store/location-stats.js';
import { type Access, assertInScope, inScope, type Mode, modeOf } from './access.js';
import { type CursorCodec, filterParts, fingerprint, type Position } from './cursor.js';
import { notFound, profileForbidden } from './errors.js';
import { messages } from './messages.js';

export interface LocationQuery {
  parentId: string | undefined;
  includeChildren: boolean;
  withCounts: boolean;
  search: string | undefined;
  /** Opt-in paging for large scopes: at most this many per answer (clamped to MAX_LOCATION_PAGE). */
  pageSize: number | undefined;
  /** pagination.nextCursor of an earlier page, with the same filters. */
  cursor: string | undefined;
}

interface LocationDeps {
  dealers: Pick<DealerStore, 'children' | 'existing' | 'subtree' | 'find' | 'countMatching'>;
  locationStats: Pick<LocationStatsStore, 'forLocations'>;
  cursors: CursorCodec;
  now: () => Date;
}

/** Reading the dealer locations in a partner's scope. */
export function locationReads(deps: LocationDeps) {
  return {
    /** `projection`: what each location is read as (a Dealer unless the caller says). */
    find: <T = Dealer>(
      partner: { id: string; test: boolean; access: Access },
      query: LocationQuery,
      projection?: Projection<T>,
    ) => findLocations(deps, partner.access, modeOf(partner), query, projection),
    /**
     * The profiles whose listings GET /locations/{id}/listings shows: the location, and with
     * includeChildren its descendants. A location that is unknown or outside the scope answers 404
     * alike (docs/contract.md#locations).
     */
    async listingScope(access: Access, id: string, includeChildren: boolean): Promise<string[]> {
      if (!inScope(access, id) || !(await deps.dealers.existing([id])).has(id)) {
        throw notFound(messages.locationNotFound(id));
      }
      return includeChildren ? deps.dealers.subtree([id]) : [id];
    },
  };
}

export type LocationReads = ReturnType<typeof locationReads>;

export const MAX_LOCATION_PAGE = 500;
export const DEFAULT_LOCATION_PAGE = 100;

export type Location<T = Dealer> = T & { isRoot: boolean; stats?: LocationStats };

export interface LocationList<T = Dealer> {
  data: Location<T>[];
  /** Every location the filters match, on all pages. */
  total: number;
  /** Present when the request asked for pages (pageSize or cursor). */
  pagination?: { pageSize: number; nextCursor: string; hasMore: boolean };
}

/**
 * GET /locations: with parentId, that parent's children (and deeper descendants when
 * includeChildren); without, the partner's roots (and all their descendants when includeChildren).
 * A global partner's roots are the profiles without a parent.
 */
async function findLocations<T>(
  deps: LocationDeps,
  access: Access,
  mode: Mode,
  query: LocationQuery,
  projection?: Projection<T>,
): Promise<LocationList<T>> {
  const roots = access.scope === 'global' ? await deps.dealers.children(null) : access.rootProfileIds;
  let ids: string[];
  if (query.parentId) {
    assertInScope(access, [query.parentId]);
    // Fix found by test/locations.test.ts: a global partner's scope contains every id, so an
    // unknown parentId used to answer 200 with an empty list, unlike the listing filters (403).
    // docs/contract.md#access-scope: an unknown profile id is treated exactly like one outside the scope.
    if (access.scope === 'global' && !(await deps.dealers.existing([query.parentId])).has(query.parentId)) {
      throw profileForbidden(messages.dealerNotInScope(query.parentId));
    }
    const children = await deps.dealers.children([query.parentId]);
    ids = query.includeChildren ? await deps.dealers.subtree(children) : children;
  } else if (query.includeChildren) {
    ids = access.scope === 'global' ? [] : access.profileIds;
  } else {
    ids = roots;
  }
  const all = query.includeChildren && !query.parentId && access.scope === 'global';
  const scope = all ? null : ids;
  const paged = query.pageSize !== undefined || query.cursor !== undefined;
  // A cursor belongs to the filters it was issued with (as for listings).
  const filters = {
    context: 'locations',
    parentId: query.parentId ?? null,
    includeChildren: query.includeChildren,
    search: query.search ?? null,
  };
  const print = fingerprint(filters);
  const parts = filterParts(filters);
  const after =
    query.cursor !== undefined ? fromPosition(deps.cursors.decode(query.cursor, print, parts)) : null;
  const pageSize = Math.min(query.pageSize ?? DEFAULT_LOCATION_PAGE, MAX_LOCATION_PAGE);
  // When the answer is every location of a known scope, its stats are read beside the locations
  // (one round trip instead of two in a row); otherwise for the locations shown, once known.
  const wholeScope = query.withCounts && !paged && query.search === undefined && scope !== null;
  const [found, total, scopeStats] = await Promise.all([
    // One more than shown tells whether anything follows.
    deps.dealers.find(scope, {
      search: query.search,
      after,
      ...(paged ? { limit: pageSize + 1 } : {}),
      ...(projection ? { projection } : {}),
    }),
    paged ? deps.dealers.countMatching(scope, query.search) : undefined,
    wholeScope ? deps.locationStats.forLocations(scope, mode, deps.now()) : undefined,
  ]);
  const shown = paged ? found.slice(0, pageSize) : found;
  const rootSet = new Set(roots);
  const stats = query.withCounts
    ? (scopeStats ??
      (await deps.locationStats.forLocations(
        shown.map((r) => r.id),
        mode,
        deps.now(),
      )))
    : undefined;
  const data = shown.map(({ dealer, id }) => {
    // The row's own object (dealers.find makes one per row and per call), completed in place
    // rather than copied: the spread, of objects of whatever shape the projection gives, was the
    // loop's cost; in place, locations-500 served 1.22 × the requests
    // (bench/results/2026-11-30-location-stats.txt).
    const location = dealer as Location<T>;
    location.isRoot = rootSet.has(id);
    if (stats) location.stats = stats.get(id)!;
    return location;
  });
  if (!paged) return { data, total: data.length };
  const last = shown.at(-1);
  const resume = last ? last.position : after;
  return {
    data,
    total: total!,
    pagination: {
      pageSize,
      nextCursor: deps.cursors.encode(resume ? { ts: resume.key, id: resume.id } : null, print, parts),
      hasMore: found.length > shown.length,
    },
  };
}

/** The cursor codec stores a pair; for locations its first member is the sort key, not a time. */
function fromPosition(position: Position | null): DealerPosition | null {
  return position ? { key: position.ts, id: position.id } : null;
}
