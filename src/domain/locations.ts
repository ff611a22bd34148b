import type { Services } from '../services.js';
import type { Dealer } from '../store/dealers.js';
import type { LocationStats } from '../store/location-stats.js';
import { type Access, assertInScope } from './access.js';
import { profileForbidden } from './errors.js';

export interface LocationQuery {
  parentId: string | undefined;
  includeChildren: boolean;
  withCounts: boolean;
  search: string | undefined;
}

export type Location = Dealer & { isRoot: boolean; stats?: LocationStats };

/**
 * GET /locations: with parentId, that parent's children (and deeper descendants when
 * includeChildren); without, the partner's roots (and all their descendants when includeChildren).
 * A global partner's roots are the profiles without a parent.
 */
export async function findLocations(
  services: Services,
  access: Access,
  query: LocationQuery,
): Promise<Location[]> {
  const roots = access.scope === 'global' ? await services.dealers.children(null) : access.rootProfileIds;
  let ids: string[];
  if (query.parentId) {
    assertInScope(access, [query.parentId]);
    // Fix found by test/locations.test.ts: a global partner's scope contains every id, so an
    // unknown parentId used to answer 200 with an empty list, unlike the listing filters (403).
    // decisions.md: an unknown profile id is treated exactly like one outside the scope.
    if (
      access.scope === 'global' &&
      !(await services.dealers.existing([query.parentId])).has(query.parentId)
    ) {
      throw profileForbidden(`Dealer profile ${query.parentId} is not in this API secret's access scope.`);
    }
    const children = await services.dealers.children([query.parentId]);
    ids = query.includeChildren ? await services.dealers.subtree(children) : children;
  } else if (query.includeChildren) {
    ids = access.scope === 'global' ? [] : access.profileIds;
  } else {
    ids = roots;
  }
  const all = query.includeChildren && !query.parentId && access.scope === 'global';
  let dealers = await services.dealers.list(all ? null : ids);
  if (query.search) {
    const needle = query.search.toLowerCase();
    dealers = dealers.filter((d) =>
      [d.companyName, d.fullName, d.displayName, d.city, d.province, d.locationCode].some((v) =>
        v?.toLowerCase().includes(needle),
      ),
    );
  }
  const rootSet = new Set(roots);
  const stats = query.withCounts
    ? await services.locationStats.forLocations(
        dealers.map((d) => d.id),
        services.now(),
      )
    : undefined;
  return dealers.map((d) => ({
    ...d,
    isRoot: rootSet.has(d.id),
    ...(stats ? { stats: stats.get(d.id)! } : {}),
  }));
}
