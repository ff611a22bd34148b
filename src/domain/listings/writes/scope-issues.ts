import { z } from 'zod';
import type { Partner } from '../../access.js';
import { isStorableText } from '../../text.js';
import type { Invalid, ItemError, Prepared } from '../items.js';
import { resolveDealers } from './dealers.js';
import type { ListingWriteDeps } from './deps.js';

const uuid = z.uuid();

/**
 * The dealer an item names, read from its raw body (the item failed validation, so there is no
 * write to read it from): dealerProfileId when it is a UUID, else dealerLocationCode. A malformed
 * one is an issue of its own already.
 */
function dealerOfRaw(body: Record<string, unknown>): { id: string } | { code: string } | undefined {
  const id = body.dealerProfileId;
  if (id !== undefined && id !== null && id !== '') {
    return typeof id === 'string' && uuid.safeParse(id.toLowerCase()).success
      ? { id: id.toLowerCase() }
      : undefined;
  }
  const code = body.dealerLocationCode;
  // Found by the document's edges on PostgreSQL (issue 40): a code with U+0000 went to the lookup
  // and PostgreSQL refused the parameter, a 500. Such a code is an issue of its own already.
  return typeof code === 'string' && code.trim() !== '' && isStorableText(code)
    ? { code: code.trim() }
    : undefined;
}

/**
 * Items that failed validation learn about their dealer too (issue 41: an item outside the scope
 * reported only its date, then PROFILE_FORBIDDEN once the date was fixed): the dealer each names
 * is resolved as for a valid item (resolveDealers, one pair of queries for all), and a refusal
 * joins the item's issues at the field that names the dealer. Every problem in one answer.
 */
export async function addScopeIssues(
  deps: Pick<ListingWriteDeps, 'dealers'>,
  partner: Partner,
  invalid: readonly Invalid[],
): Promise<void> {
  const named = invalid.flatMap((item) => {
    const dealer = dealerOfRaw(item.body);
    return dealer
      ? [{ index: item.index, reference: item.reference, write: { dealer } } as unknown as Prepared]
      : [];
  });
  if (named.length === 0) return;
  const refused: ItemError[] = [];
  await resolveDealers(deps, partner, named, refused);
  const byIndex = new Map(refused.map((e) => [e.index, e]));
  for (const item of invalid) {
    const error = byIndex.get(item.index);
    if (!error) continue;
    const known = new Set(item.issues.map((i) => i.path));
    for (const issue of error.issues ?? []) if (!known.has(issue.path)) item.issues.push(issue);
  }
}
