import type { Queryable } from '../../../store/db.js';
import { ifMatchHolds, listingEtag, preconditionFailed } from '../../etag.js';
import type { ListingWriteDeps } from './deps.js';

export interface Version {
  json: string;
  dealerId: string;
  etag: string;
}

/** The listing's current version (its JSON as a GET shows it, and its ETag), or undefined. */
export async function readVersion(
  deps: Pick<ListingWriteDeps, 'store' | 'view'>,
  partnerId: string,
  reference: string,
  tx?: Queryable,
): Promise<Version | undefined> {
  const found = await deps.store.readOne(partnerId, reference, deps.view, tx);
  return found && { ...found, etag: listingEtag(found.json) };
}

/**
 * Checks If-Match against the version the write is about to replace. Called inside the write's
 * transaction after the listing's row lock (lockExisting), so no other write can slip in between
 * the comparison and the write: the check and the write see one version.
 */
export async function assertIfMatch(
  deps: Pick<ListingWriteDeps, 'store' | 'view'>,
  partnerId: string,
  reference: string,
  ifMatch: string | undefined,
  tx: Queryable,
): Promise<void> {
  if (ifMatch === undefined || ifMatch.trim() === '') return;
  const current = await readVersion(deps, partnerId, reference, tx);
  if (!ifMatchHolds(ifMatch, current?.etag)) throw preconditionFailed(reference, current?.etag);
}
