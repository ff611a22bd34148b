import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookPayload } from './types.js';

/**
 * Verifies a delivery as the Standard Webhooks spec says (https://www.standardwebhooks.com):
 * HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}` with the secret's bytes (base64
 * after `whsec_`), compared in constant time with each `v1,` signature of the header, and a
 * timestamp within the tolerance (against replays). Verify the raw body as it arrived: parsing and
 * re-serialising JSON changes bytes and breaks the signature.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Oldest (and furthest in the future) timestamp accepted, in seconds; default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The clock to check timestamps against; default now. */
  now?: Date;
}

function header(headers: HeaderBag, name: string): string {
  const value =
    typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(name)
      : (headers as Record<string, string | string[] | undefined>)[name];
  const one = Array.isArray(value) ? value[0] : value;
  if (!one) throw new WebhookVerificationError(`The ${name} header is missing.`);
  return one;
}

function key(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) {
    throw new WebhookVerificationError('A signing secret starts with whsec_ (as the service showed it).');
  }
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

/**
 * Checks a delivery's signature and timestamp and returns its payload; throws a
 * `WebhookVerificationError` saying why otherwise. `secrets`: one, or both during a rotation's
 * grace period (any one verifying is enough). Headers as Node gives them (`req.headers`) or a
 * fetch `Headers`.
 */
export function verifyWebhook(
  body: string | Buffer | Uint8Array,
  headers: HeaderBag,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): WebhookPayload {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp))
    throw new WebhookVerificationError('webhook-timestamp is not a number of seconds.');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationError(
      `webhook-timestamp is ${now - seconds} s from now, outside the ${tolerance} s tolerance (a replay, or a clock off).`,
    );
  }
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), raw]);
  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  const matches = list.some((secret) => {
    const expected = createHmac('sha256', key(secret)).update(signed).digest();
    return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  });
  if (!matches) {
    throw new WebhookVerificationError(
      "No signature matches: the body changed on the way (verify the raw bytes), or the secret is not this endpoint's.",
    );
  }
  return JSON.parse(raw.toString('utf8')) as WebhookPayload;
}
