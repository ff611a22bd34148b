import type { Location } from '../../../domain/locations.js';
import type { LocationJson } from '../../../store/location-json.js';

/** The location's whole JSON text: stats hold numbers only, written in the schema's order. */
export function locationJson(location: Location<LocationJson>): string {
  const s = location.stats;
  const avg = s?.avgActivePrevMonth === undefined ? '' : `,"avgActivePrevMonth":${s.avgActivePrevMonth}`;
  const stats = s
    ? `,"stats":{"activeListings":${s.activeListings},"totalListings":${s.totalListings}${avg}}`
    : '';
  return `${location.head},"isRoot":${location.isRoot}${stats},"updatedAt":${JSON.stringify(location.updatedAt)}}`;
}

export type { LocationJson };
