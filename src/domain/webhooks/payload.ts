import type { CursorCodec, Position } from '../cursor.js';
import { fingerprint } from '../cursor.js';

/**
 * A delivery's `cursor`: the endpoint's position after it, signed like every sync cursor and bound
 * to the endpoint, so only POST /webhooks/{id}/resume of that endpoint takes it (a replay).
 */
export const endpointFingerprint = (endpointId: string) => fingerprint({ webhookEndpoint: endpointId });

/**
 * The body, `{"type", "data", "cursor"}`. `data` comes as each listing's JSON text already: the
 * read model's stored text, as GET /listings/{id} sends it, spliced in unparsed.
 */
export function deliveryBody(
  cursors: CursorCodec,
  endpointId: string,
  type: 'listings.changed' | 'ping',
  data: readonly string[],
  position: Position,
): string {
  const cursor = JSON.stringify(cursors.encode(position, endpointFingerprint(endpointId)));
  return `{"type":${JSON.stringify(type)},"data":[${data.join(',')}],"cursor":${cursor}}`;
}
