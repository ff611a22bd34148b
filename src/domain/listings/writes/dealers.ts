import { inScope, isGlobal, type Partner } from '../../access.js';
import { problem } from '../../errors.js';
import { messages } from '../../messages.js';
import { type ItemError, itemError, type Prepared, validationFailed } from '../items.js';
import type { ListingWriteDeps } from './deps.js';

/** The issue of a dealer outside the scope, at the field that names it. */
function scopeIssue(dealer: { id: string } | { code: string }) {
  return 'id' in dealer
    ? {
        path: 'dealerProfileId',
        message: "is not in this API secret's access scope",
        code: 'profile_forbidden',
      }
    : {
        path: 'dealerLocationCode',
        message: "is not in this API secret's access scope",
        code: 'profile_forbidden',
      };
}

/** A dealer no profile has, named by a global partner: the field at fault, and why. */
function unknownDealer(dealer: { id: string } | { code: string }) {
  const issue =
    'id' in dealer
      ? { path: 'dealerProfileId', message: messages.noDealerWithId(), code: 'not_found' }
      : { path: 'dealerLocationCode', message: messages.noDealerWithCode(), code: 'not_found' };
  return validationFailed([issue]);
}

/**
 * Resolves the dealer each item names (dealerProfileId, else dealerLocationCode) in two queries
 * for the whole batch. For a restricted partner, unknown and out-of-scope dealers are refused
 * alike with PROFILE_FORBIDDEN (it cannot probe which ids exist); nothing is outside a global
 * partner's scope, so it is told that no dealer profile has the id or code (VALIDATION_FAILED).
 * Items naming no dealer are resolved later, once we know whether the listing exists (the
 * map holds '' for them).
 */
export async function resolveDealers(
  deps: Pick<ListingWriteDeps, 'dealers'>,
  partner: Partner,
  items: Prepared[],
  errors: ItemError[],
): Promise<Map<number, string>> {
  const ids = [
    ...new Set(items.flatMap((p) => (p.write.dealer && 'id' in p.write.dealer ? [p.write.dealer.id] : []))),
  ];
  const codes = [
    ...new Set(
      items.flatMap((p) => (p.write.dealer && 'code' in p.write.dealer ? [p.write.dealer.code] : [])),
    ),
  ];
  const [known, byCode] = await Promise.all([deps.dealers.existing(ids), deps.dealers.idsByCodes(codes)]);
  const resolved = new Map<number, string>();
  for (const p of items) {
    const dealer = p.write.dealer;
    if (!dealer) {
      resolved.set(p.index, '');
      continue;
    }
    const id =
      'id' in dealer ? (known.has(dealer.id) ? dealer.id : undefined) : byCode.get(dealer.code.toLowerCase());
    if (id && inScope(partner.access, id)) {
      resolved.set(p.index, id);
    } else if (!id && isGlobal(partner.access)) {
      errors.push(itemError(p.index, p.reference, unknownDealer(dealer)));
    } else {
      errors.push(
        itemError(
          p.index,
          p.reference,
          problem(
            'PROFILE_FORBIDDEN',
            'id' in dealer
              ? messages.dealerNotInScope(dealer.id)
              : messages.locationCodeNotInScope(dealer.code),
            // The field at fault, as a validation issue names it (issue 41: with the item's other
            // issues in one answer, items.ts).
            [scopeIssue(dealer)],
          ),
        ),
      );
    }
  }
  return resolved;
}
