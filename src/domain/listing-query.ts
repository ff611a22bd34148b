import type { Services } from '../services.js';
import type { ListingFilter, Sort } from '../store/listings-read.js';
import { type Access, assertInScope, narrow } from './access.js';
import { profileForbidden } from './errors.js';

export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

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
}

/**
 * Turns a list request into the store's filter: the partner's scope, narrowed by each dealer
 * filter. Every profile a filter names must be inside the scope (PROFILE_FORBIDDEN otherwise);
 * an unknown one is refused the same way, so ids cannot be probed.
 */
export async function listingFilter(
  services: Services,
  access: Access,
  query: ListingQuery,
  extra: readonly (readonly string[])[] = [],
): Promise<ListingFilter> {
  const sets: (readonly string[])[] = [...extra];
  if (query.dealerIds.length) {
    await assertKnownInScope(services, access, query.dealerIds);
    for (const id of query.dealerIds) sets.push([id]);
  }
  if (query.parentDealerId) {
    await assertKnownInScope(services, access, [query.parentDealerId]);
    sets.push(await services.dealers.subtree([query.parentDealerId]));
  }
  if (query.locationCode) {
    const id = (await services.dealers.idsByCodes([query.locationCode])).get(
      query.locationCode.toLowerCase(),
    );
    if (!id)
      throw profileForbidden(
        `Location code "${query.locationCode}" is not in this API secret's access scope.`,
      );
    assertInScope(access, [id]);
    sets.push([id]);
  }
  return {
    profileIds: narrow(access, sets),
    status: query.status === 'all' ? null : query.status,
    updatedSince: query.updatedSince ?? null,
  };
}

async function assertKnownInScope(services: Services, access: Access, ids: string[]): Promise<void> {
  assertInScope(access, ids);
  // A global partner's scope contains every id, including ones that do not exist.
  if (access.scope === 'global') {
    const known = await services.dealers.existing(ids);
    assertInScope({ scope: 'restricted', rootProfileIds: [], profileIds: [...known] }, ids);
  }
}

/** One page of a listing list, with its pagination block. */
export async function listingPage(services: Services, filter: ListingFilter, query: ListingQuery) {
  const offset = (query.page - 1) * query.pageSize;
  const [data, totalItems] = await Promise.all([
    services.listings.page(filter, query.sort, query.pageSize, offset),
    services.listings.count(filter),
  ]);
  return {
    data,
    pagination: {
      page: query.page,
      pageSize: query.pageSize,
      totalItems,
      totalPages: Math.ceil(totalItems / query.pageSize),
    },
  };
}
