import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` and the
 * base64 of the key; a signature is `v1,` and the base64 HMAC-SHA256, under that key, of
 * `{webhook-id}.{webhook-timestamp}.{body}`. Any Standard Webhooks library verifies it.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes (the format asks for 24 to 64). */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The three headers of a delivery. During a rotation's grace period both secrets sign: the
 * signatures are space-separated, and a receiver accepts the message if any of them verifies.
 */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}

/**
 * The secrets that sign a message to an endpoint now: its secret, and during a rotation's grace
 * the one it replaced. Every message signs with these, deliveries and test pings alike.
 */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: string | null },
  now: Date = new Date(),
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = endpoint;
  const previousValid =
    previousSecret !== null &&
    previousSecretExpiresAt !== null &&
    Date.parse(previousSecretExpiresAt) > now.getTime();
  return previousValid ? [secret, previousSecret] : [secret];
}
