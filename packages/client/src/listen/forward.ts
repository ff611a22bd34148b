import { randomUUID } from 'node:crypto';
import { sleep } from '../retry.js';
import { webhookHeaders } from '../webhook-sign.js';

/** As the service waits for a receiver: 10 s an attempt, then backoff doubling up to 30 s. */
const TIMEOUT_MS = 10_000;
const BACKOFF = { firstMs: 1_000, maxMs: 30_000 };
/** Only so much of a failing receiver's answer is shown (the service keeps a kilobyte). */
const SHOWN_CHARS = 200;

/**
 * POSTs one delivery until the receiver answers 2xx, as the service does: the same webhook-id on
 * every attempt (so a receiver de-duplicating by it sees one delivery), a fresh timestamp and
 * signature each time, no redirects followed (a 3xx is a failed attempt). Returns the attempts it
 * took; throws only when `signal` stops it.
 */
export async function forward(
  target: string,
  secret: string,
  body: string,
  signal: AbortSignal,
  say: (line: string) => void,
): Promise<{ id: string; attempts: number }> {
  const id = `msg_${randomUUID().replaceAll('-', '')}`;
  for (let attempt = 1; ; attempt++) {
    let failure: string;
    try {
      const response = await fetch(target, {
        method: 'POST',
        headers: { ...webhookHeaders(secret, id, body), 'user-agent': 'Forecourt-Listen/1' },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
      });
      // Shown in your terminal: control and format characters (an escape sequence, a CR that
      // would rewrite the line) become spaces.
      const text = (await response.text().catch(() => ''))
        .slice(0, SHOWN_CHARS)
        .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
        .trim();
      if (response.status >= 200 && response.status < 300) return { id, attempts: attempt };
      failure = `answered ${response.status}${text ? `: ${text}` : ''}`;
    } catch (error) {
      signal.throwIfAborted();
      const cause = (error as Error).cause as Error | undefined;
      failure = `failed: ${cause?.message ?? (error as Error).message}`;
    }
    const delayMs = Math.min(BACKOFF.firstMs * 2 ** (attempt - 1), BACKOFF.maxMs);
    say(`${id} attempt ${attempt} ${failure}; retrying in ${delayMs / 1000} s`);
    await sleep(delayMs, signal);
  }
}
