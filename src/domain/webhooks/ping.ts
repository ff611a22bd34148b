import { randomUUID } from 'node:crypto';
import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { EndpointRecord, WebhookStore } from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import { keptAnswer } from './answer.js';
import { deliveryBody } from './payload.js';
import { signingSecrets, webhookHeaders } from './signing.js';
import { deliveryView } from './views.js';

/**
 * Sends a signed `ping` to an endpoint now and logs the attempt: a receiver's set-up checked in
 * one call, by its partner or an operator. It does not touch the endpoint's walk (its pending
 * delivery and position), and works on a disabled endpoint too.
 */
export async function sendPing(
  deps: { store: Pick<WebhookStore, 'recordAttempt'>; cursors: CursorCodec; post: PostWebhook },
  record: EndpointRecord,
) {
  const deliveryId = randomUUID();
  const body = deliveryBody(deps.cursors, record.id, 'ping', [], record.position);
  const result = keptAnswer(
    await deps.post(record.url, webhookHeaders(signingSecrets(record), `msg_${deliveryId}`, body), body),
  );
  const ok = result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
  const attempt = await deps.store.recordAttempt(record.id, {
    deliveryId,
    type: 'ping',
    attempt: 1,
    ok,
    listingCount: 0,
    responseCode: result.status,
    responseBody: result.body,
    error: ok ? null : (result.error ?? `the endpoint answered ${result.status}, not 2xx`),
    durationMs: result.durationMs,
    nextAttemptAt: null,
  });
  return deliveryView(attempt);
}
