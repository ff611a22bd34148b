import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signing as the service signs its webhooks (Standard Webhooks): `v1,` and the base64
 * HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed with the base64-decoded part of the secret after
 * `whsec_`. verifyWebhook (and any Standard Webhooks library) checks it. Used by `forecourt
 * listen` to deliver to a local receiver exactly as the service would.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  if (!secret.startsWith('whsec_')) throw new TypeError('A signing secret starts with whsec_.');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** A new signing secret in the service's format: whsec_ and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The headers of one delivery attempt: the same id on every retry, a fresh timestamp and signature. */
export function webhookHeaders(
  secret: string,
  id: string,
  body: string,
  now = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}
