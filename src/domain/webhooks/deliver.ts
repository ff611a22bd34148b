import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { AttemptOutcome, EndpointRecord } from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import { keptAnswer } from './answer.js';
import type { Delivery } from './next-delivery.js';
import { deliveryBody } from './payload.js';
import { signingSecrets, webhookHeaders } from './signing.js';

/**
 * Sends one delivery, signed with the endpoint's secrets, and says how it went: the attempt as the
 * delivery log keeps it (a 2xx is a success; anything else, or no answer, a failure). When the
 * next attempt is due is the caller's to decide (record.ts).
 */
export async function deliver(
  deps: { cursors: CursorCodec; post: PostWebhook },
  endpoint: EndpointRecord,
  { deliveryId, through, attempt, listings }: Delivery,
): Promise<AttemptOutcome> {
  const data = listings.map((row) => row.listing.json);
  const body = deliveryBody(deps.cursors, endpoint.id, 'listings.changed', data, through);
  const headers = webhookHeaders(signingSecrets(endpoint), `msg_${deliveryId}`, body);
  const result = keptAnswer(await deps.post(endpoint.url, headers, body));
  const ok = result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
  return {
    deliveryId,
    type: 'listings.changed',
    attempt,
    ok,
    listingCount: listings.length,
    responseCode: result.status,
    responseBody: result.body,
    error: ok ? null : (result.error ?? `the endpoint answered ${result.status}, not 2xx`),
    durationMs: result.durationMs,
    nextAttemptAt: null,
  };
}
