import { randomUUID } from 'node:crypto';
import type { DealerStore } from '../../store/dealers.js';
import type { PartnerStore } from '../../store/partners.js';
import type { EndpointRecord } from '../../store/webhooks/index.js';
import { fingerprint } from '../cursor.js';

/**
 * What an endpoint may carry now: the partner's scope as it is, narrowed by the endpoint's
 * filter (dealer profiles with their sub-locations; statuses, as the listing's was when the event
 * happened). Null while the partner is disabled or lacks a scope. The one rule of both walks: of
 * listings (next-delivery.ts) and of events (domain/events/rounds.ts).
 */
export async function endpointScope(
  deps: { partners: Pick<PartnerStore, 'get'>; dealers: Pick<DealerStore, 'subtree'> },
  endpoint: EndpointRecord,
): Promise<{ profileIds: string[] | null; statuses: string[] | null } | null> {
  const partner = await deps.partners.get(endpoint.partnerId);
  if (!partner || partner.disabled) return null;
  if (!partner.scopes.includes('read:listings') || !partner.scopes.includes('manage:webhooks')) return null;
  let profileIds: string[] | null =
    partner.accessScope === 'global' ? null : await deps.dealers.subtree(partner.rootProfileIds);
  if (endpoint.filterProfileIds) {
    const wanted = await deps.dealers.subtree(endpoint.filterProfileIds);
    const allowed = profileIds === null ? null : new Set(profileIds);
    profileIds = wanted.filter((id) => allowed === null || allowed.has(id));
  }
  return { profileIds, statuses: endpoint.filterStatuses };
}

/**
 * A digest of what a delivery was read under (the walk's filter: mode, profiles, statuses, event
 * types), kept with a delivery waiting for its retry (migration 037). A retry read under another
 * scope may carry what the first attempt did not, so it goes out under a new webhook-id: a
 * receiver that de-duplicates by the id never skips what was added.
 */
export function scopeKey(filter: Record<string, unknown>): string {
  // Lists in any order are one scope (a subtree's ids come as the database reads them).
  const sorted = Object.entries(filter).map(([name, value]) => [
    name,
    Array.isArray(value) ? [...value].sort() : value,
  ]);
  return fingerprint(Object.fromEntries(sorted));
}

/**
 * The id a retry goes out under: the pending delivery's own, or, read under another scope than its
 * first attempt (it may carry listings or events that attempt did not), a new one that `replaces`
 * it, so a receiver that applied the first attempt does not skip what was added as a repeat.
 * A pending delivery read before scopes were kept (null) keeps its id.
 */
export function retryIdentity(
  pending: { deliveryId: string; scope: string | null },
  scope: string,
): { deliveryId: string; replaces: string | undefined } {
  const rescoped = pending.scope !== null && pending.scope !== scope;
  return rescoped
    ? { deliveryId: randomUUID(), replaces: pending.deliveryId }
    : { deliveryId: pending.deliveryId, replaces: undefined };
}
