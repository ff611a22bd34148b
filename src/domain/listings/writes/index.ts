import type { Partner } from '../../access.js';
import type { Status } from '../input.js';
import type { RawItem } from '../items.js';
import type { ListingWriteDeps } from './deps.js';
import type { PatchOptions } from './patch.js';
import { patchListing } from './patch.js';
import { changeStatus } from './status.js';
import { type UpsertOptions, upsertListings } from './upsert.js';

export type { ItemError, ItemResult, Outcome, RawItem } from '../items.js';
export type { ListingWriteDeps } from './deps.js';

/** The partner's writes: PUT and bulk upsert, PATCH, status changes and DELETE (status sold). */
export function listingWrites(deps: ListingWriteDeps) {
  return {
    upsert: (partner: Partner, items: readonly RawItem[], options: UpsertOptions) =>
      upsertListings(deps, partner, items, options),
    patch: (partner: Partner, reference: string, patch: Record<string, unknown>, options: PatchOptions) =>
      patchListing(deps, partner, reference, patch, options),
    changeStatus: (
      partner: Partner,
      reference: string,
      status: Status,
      options: { ifMatch?: string | undefined; dryRun?: boolean } = {},
    ) => changeStatus(deps, partner, reference, status, options),
  };
}

export type ListingWrites = ReturnType<typeof listingWrites>;
