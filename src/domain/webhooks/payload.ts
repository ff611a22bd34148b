import type { CursorCodec, Position } from '../cursor.js';
import { fingerprint } from '../cursor.js';

/**
 * A delivery's `cursor`: the endpoint's position after it, signed like every sync cursor and bound
 * to the endpoint, so only POST /webhooks/{id}/resume of that endpoint takes it (a replay).
 */
export const endpointFingerprint = (endpointId: string) => fingerprint({ webhookEndpoint: endpointId });

export function deliveryBody(
  cursors: CursorCodec,
  endpointId: string,
  type: 'listings.changed' | 'ping',
  data: unknown[],
  position: Position,
): string {
  return JSON.stringify({ type, data, cursor: cursors.encode(position, endpointFingerprint(endpointId)) });
}
