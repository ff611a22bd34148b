import type { Partner } from '../access.js';
import type { Status } from '../listing-input.js';
import type { RawItem } from '../listing-items.js';
import type { ListingWriteDeps } from './deps.js';
import { changeStatus } from './status.js';
import { upsertListings } from './upsert.js';

export type { ItemError, ItemResult, Outcome, RawItem } from '../listing-items.js';
export type { ListingWriteDeps } from './deps.js';

/** The partner's writes: PUT and bulk upsert, status changes and DELETE (status sold). */
export function listingWrites(deps: ListingWriteDeps) {
  return {
    upsert: (partner: Partner, items: readonly RawItem[], options: { dryRun: boolean }) =>
      upsertListings(deps, partner, items, options),
    changeStatus: (partner: Partner, reference: string, status: Status) =>
      changeStatus(deps, partner, reference, status),
  };
}

export type ListingWrites = ReturnType<typeof listingWrites>;
