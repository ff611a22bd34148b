import type { Location } from '../../../domain/locations.js';
import type { Projection } from '../../../store/db.js';
import { DEALER_JSON, isoTime } from './listing-view.js';

/**
 * A location's JSON, built like a listing's (listing-view.ts) for the same reason: 500 locations
 * parsed, mapped and passed through the response schema cost the service more than the database's
 * work. The database writes the dealer's fields (the schema's order, without the closing brace);
 * what only the request knows follows in the schema's order: isRoot, stats, updatedAt.
 */
export interface LocationJson {
  head: string;
  updatedAt: string;
}

export const locationJsonProjection: Projection<LocationJson> = {
  columns: `left(json_build_object(${DEALER_JSON})::text, -1) AS json_head, ${isoTime('d.updated_at')} AS json_updated_at`,
  read: (row) => ({ head: row.json_head as string, updatedAt: row.json_updated_at as string }),
};

/** The location's whole JSON text: stats hold numbers only, written in the schema's order. */
export function locationJson(location: Location<LocationJson>): string {
  const s = location.stats;
  const avg = s?.avgActivePrevMonth === undefined ? '' : `,"avgActivePrevMonth":${s.avgActivePrevMonth}`;
  const stats = s
    ? `,"stats":{"activeListings":${s.activeListings},"totalListings":${s.totalListings}${avg}}`
    : '';
  return `${location.head},"isRoot":${location.isRoot}${stats},"updatedAt":${JSON.stringify(location.updatedAt)}}`;
}
