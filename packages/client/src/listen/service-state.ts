import { ForecourtError } from '../errors.js';
import { errorText } from '../import/messages.js';
import { backoffMs, requestedDelayMs, sleep } from '../retry.js';

/**
 * `forecourt listen` and the service: a listener runs for hours, and a service that is away for a
 * while (a deploy, a restart, a network hiccup) must not stop it. A failure that passes (no answer,
 * a 5xx, a 429) is retried for as long as it lasts, with capped exponential back-off and jitter,
 * and only the changes of state are printed: one line when the service stops answering, one when
 * it answers again (not a line per attempt). What no retry fixes (a secret refused, a certificate
 * not trusted, a scope missing) still stops the listener with exit code 2.
 */
export interface ServiceState {
  /** A call answered: prints that the service is back, when it was away. */
  answered(): void;
  /** A call failed: throws what no retry fixes; otherwise prints the first of a run, then waits. */
  failed(error: unknown): Promise<void>;
}

export interface BackoffOptions {
  /** The first wait (before jitter); doubles each attempt up to `maxMs`. */
  firstMs: number;
  maxMs: number;
  random?: () => number;
  now?: () => number;
}

/** Whether another attempt may succeed: no answer, a server error, or a rate limit. */
export function passes(error: unknown): boolean {
  if (!(error instanceof ForecourtError)) return false;
  if (error.code === 'TLS_CERTIFICATE_ERROR') return false;
  return error.status === 0 || error.status === 429 || error.status >= 500;
}

/** The wait before attempt `attempt + 1`: equal jitter on min(max, first × 2^(attempt-1)). */
export function serviceDelayMs(attempt: number, options: BackoffOptions): number {
  return backoffMs(attempt, options.firstMs, options.maxMs, options.random);
}

export function serviceState(
  say: (line: string) => void,
  signal: AbortSignal,
  options: BackoffOptions,
): ServiceState {
  const now = options.now ?? Date.now;
  let failures = 0;
  let since = 0;
  return {
    answered() {
      if (failures === 0) return;
      const seconds = Math.round((now() - since) / 100) / 10;
      say(
        `service answering again after ${seconds} s (${failures} failed ${failures === 1 ? 'attempt' : 'attempts'}); going on`,
      );
      failures = 0;
    },
    async failed(error) {
      signal.throwIfAborted();
      if (!passes(error)) throw error;
      failures++;
      if (failures === 1) {
        since = now();
        say(
          `service not answering (${errorText(error)}); retrying with back-off up to ${options.maxMs / 1000} s ` +
            'until it answers (Ctrl-C stops)',
        );
      }
      // The service's own word (Retry-After, a 429's reset) when it gave one: a rate limit asking for
      // 60 s is not tried again after 1, 2, 4, 8 and 16.
      const asked = error instanceof ForecourtError ? error.retryAfterMs : undefined;
      await sleep(
        asked === undefined
          ? serviceDelayMs(failures, options)
          : requestedDelayMs(asked, Math.max(options.maxMs, asked), options.random),
        signal,
      );
    },
  };
}
