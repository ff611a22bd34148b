/**
 * When a failed delivery is tried again: exponential backoff with jitter, the first retry within
 * 5 s, never more than an hour between attempts, for three days from the first failure of a
 * streak; then the endpoint is disabled (docs/webhooks.md has the table).
 */
export const RETRY_PERIOD_MS = 3 * 24 * 60 * 60 * 1000;
const FIRST_DELAY_MS = 2_000;
const MAX_DELAY_MS = 60 * 60 * 1000;

/** The wait after failed attempt number `attempt` (1 = the first try failed). */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 30);
  // ±25 %: endpoints that failed together (a receiver's outage) do not come back in one burst.
  const jittered = base * (0.75 + random() * 0.5);
  return Math.round(Math.min(jittered, MAX_DELAY_MS));
}

/**
 * What happens after a failed attempt: retried at `retryAt`, or the endpoint disabled, with the
 * reason its owner will read. 410 Gone disables at once: the receiver says it is gone for good.
 */
export function afterFailure(
  attempt: number,
  status: number | null,
  failingSince: Date,
  now: Date,
  random: () => number = Math.random,
): { retryAt: Date } | { disable: string } {
  if (status === 410) return { disable: 'the endpoint answered 410 Gone' };
  const retryAt = new Date(now.getTime() + retryDelayMs(attempt, random));
  if (retryAt.getTime() - failingSince.getTime() > RETRY_PERIOD_MS) {
    return {
      disable: `deliveries failed for 3 days (since ${failingSince.toISOString()}, ${attempt} attempts)`,
    };
  }
  return { retryAt };
}
