/** How long to wait before a retry: the service's word when it gave one, else backoff with jitter. */

/** Retry-After in ms: delta-seconds or an HTTP date (RFC 9110); undefined when absent or unreadable. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** RateLimit-Reset (seconds until the window ends) in ms. */
export function rateLimitResetMs(headers: Headers): number | undefined {
  const value = headers.get('ratelimit-reset')?.trim();
  return value && /^\d+$/.test(value) ? Number(value) * 1000 : undefined;
}

/**
 * Exponential backoff with "equal jitter": attempt n waits between half and all of base × 2^(n-1).
 * The random half spreads clients that failed together (one outage) so they do not come back in
 * step; the fixed half keeps a floor so a retry is never immediate.
 */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const step = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * A wait the service asked for, plus a little jitter: rate-limit windows end for every client at
 * the same second, and a crowd arriving at :00 sharp would meet the next limit together.
 */
export function requestedDelayMs(requestedMs: number, maxMs: number, random = Math.random): number {
  return Math.min(maxMs, requestedMs + Math.round(random() * Math.min(1000, requestedMs * 0.1)));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
