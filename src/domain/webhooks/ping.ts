import { randomUUID } from 'node:crypto';
import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { EndpointRecord, WebhookStore } from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import { problem } from '../errors.js';
import { EVENT_TYPE_NAMES, type EventTypeName } from '../events/registry.js';
import { messages } from '../messages.js';
import { keptAnswer } from './answer.js';
import { deliveryBody } from './payload.js';
import { sampleData } from './samples.js';
import { signingSecrets, webhookHeaders } from './signing.js';
import { deliveryView } from './views.js';

/**
 * Sends a signed `ping` to an endpoint now and logs the attempt: a receiver's set-up checked in
 * one call, by its partner or an operator. It does not touch the endpoint's walk (its pending
 * delivery and position), and works on a disabled endpoint too. With `type`, one of the types the
 * endpoint subscribes to, it sends a sample delivery of that type instead (./samples.ts), so a
 * receiver's handling of each type can be tried before a real one comes; the log says `ping`.
 */
export async function sendPing(
  deps: { store: Pick<WebhookStore, 'recordAttempt'>; cursors: CursorCodec; post: PostWebhook },
  record: EndpointRecord,
  type?: string,
) {
  const deliveryId = randomUUID();
  const body =
    type === undefined
      ? deliveryBody(deps.cursors, record.id, 'ping', [], record.position)
      : sample(deps, record, type);
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

/** The body of a test delivery of `type`: refused unless the endpoint subscribes to it. */
function sample(deps: { cursors: CursorCodec }, record: EndpointRecord, type: string): string {
  if (!(EVENT_TYPE_NAMES as string[]).includes(type) || !record.events.includes(type)) {
    throw problem('INVALID_QUERY', messages.testTypeNotSubscribed(type, record.events), [
      { path: 'query.type', code: 'invalid', message: `must be one of ${record.events.join(', ')}` },
    ]);
  }
  const data = sampleData(type as EventTypeName);
  if (type === 'listings.changed') return deliveryBody(deps.cursors, record.id, type, data, record.position);
  return `{"type":${JSON.stringify(type)},"data":[${data.join(',')}]}`;
}
