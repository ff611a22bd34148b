import { createHash } from 'node:crypto';
import { problem } from './errors.js';
import { messages } from './messages.js';

/**
 * A listing's version as HTTP sees it: a hash of the listing exactly as GET /listings/{id} shows
 * it (its dealer's details included), so the ETag of a read is the If-Match of the next write.
 */
export function listingEtag(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
}

/**
 * If-Match (RFC 9110 §13.1.1): `*` holds when the listing exists; otherwise one of the listed
 * tags must equal the current one. Comparison is strong: a weak tag (W/"…") never matches, since
 * a write needs the exact version. No header (or an empty one): no precondition.
 */
export function ifMatchHolds(header: string | undefined, current: string | undefined): boolean {
  if (header === undefined || header.trim() === '') return true;
  const tags = header.split(',').map((t) => t.trim());
  if (tags.includes('*')) return current !== undefined;
  return current !== undefined && tags.includes(current);
}

/** The 412 of a failed If-Match, carrying the current ETag (when the listing exists) in its headers. */
export function preconditionFailed(reference: string, current: string | undefined) {
  const error = problem('PRECONDITION_FAILED', messages.staleIfMatch(reference, current));
  if (current !== undefined) error.headers.ETag = current;
  return error;
}
