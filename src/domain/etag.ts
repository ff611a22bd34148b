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

/** One entity tag (RFC 9110 §8.8.3): optionally weak, quoted, of visible characters but `"`. */
const ENTITY_TAG = /^(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * The 400 of an If-Match that is neither `*` nor a list of entity tags (RFC 9110 §13.1.1), or
 * undefined when it is well-formed (or absent). An ETag sent without its quotes used to be compared
 * as it was and answered 412 "has changed since the version your If-Match names", which sent the
 * partner to read the listing again for nothing: the header was wrong, not the version.
 */
export function malformedIfMatch(header: string | undefined) {
  if (header === undefined || header.trim() === '') return undefined;
  const members = header
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (members.length === 1 && members[0] === '*') return undefined;
  if (members.every((t) => ENTITY_TAG.test(t))) return undefined;
  return problem('INVALID_HEADER', messages.malformedIfMatch(header));
}

/** The 412 of a failed If-Match, carrying the current ETag (when the listing exists) in its headers. */
export function preconditionFailed(reference: string, current: string | undefined) {
  const error = problem('PRECONDITION_FAILED', messages.staleIfMatch(reference, current));
  if (current !== undefined) error.headers.ETag = current;
  return error;
}
