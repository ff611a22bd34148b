import type { Projection } from './db.js';
import { isoTime } from './listings/json.js';

/**
 * A location's JSON: the dealer's text kept by the read model (migration 011, the same object a
 * listing's `dealer` shows, its parent's summary included) without its closing brace; what only
 * the request knows follows in the schema's order: isRoot, stats, updatedAt.
 */
export interface LocationJson {
  head: string;
  updatedAt: string;
}

export const locationJsonProjection: Projection<LocationJson> = {
  columns: `left(d.read_json, -1) AS json_head, ${isoTime('d.updated_at')} AS json_updated_at`,
  read: (row) => ({ head: row.json_head as string, updatedAt: row.json_updated_at as string }),
};
