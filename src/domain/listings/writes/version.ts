import type { Queryable } from '../../../store/db.js';
import type { Owner } from '../../../store/listings/mode.js';
import { listingEtag } from '../../etag.js';
import type { ListingWriteDeps } from './deps.js';

export interface Version {
  json: string;
  dealerId: string;
  etag: string;
}

/** A listing as GET /listings/{id} shows it, with its ETag: the hash of that JSON. */
export function versionOf(read: { json: string; dealerId: string }): Version {
  return { ...read, etag: listingEtag(read.json) };
}

/** The listing's current version (its JSON as a GET shows it, and its ETag), or undefined. */
export async function readVersion(
  deps: Pick<ListingWriteDeps, 'store' | 'view'>,
  owner: Owner,
  reference: string,
  tx?: Queryable,
): Promise<Version | undefined> {
  const found = await deps.store.readOne(owner, reference, deps.view, tx);
  return found && versionOf(found);
}
