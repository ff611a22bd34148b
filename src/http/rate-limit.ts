import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { type ProblemError, problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { memoryCounter, type WindowCounter } from '../ratelimit/counter.js';
import { redisCounter } from '../ratelimit/redis-counter.js';
import type { Metrics } from './metrics.js';

const MINUTE = 60_000;

interface RateLimitOptions {
  counter: WindowCounter;
  metrics: Metrics;
  /** Requests a minute for a partner without its own limit (RATE_LIMIT_PER_MINUTE). */
  defaultPerMinute: number;
  /** Failed authentications a minute allowed from one client address (AUTH_FAILURE_LIMIT_PER_MINUTE). */
  authFailuresPerMinute: number;
  now?: () => number;
}

function rateLimited(retryAfterS: number, message: string): ProblemError {
  const answer = problem('RATE_LIMITED', message);
  answer.headers['Retry-After'] = String(retryAfterS);
  return answer;
}

const secondsUntil = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000));

/**
 * The two limits of the partner API. Per partner: every authenticated request counts once (a bulk
 * upsert of 100 listings too), and every response carries RateLimit-* headers. Per client address:
 * failed authentications, so nobody can probe secrets or load the database with guesses.
 */
export function rateLimits(options: RateLimitOptions) {
  const now = options.now ?? Date.now;
  // Addresses over their failure budget, until when. Kept in process so a blocked address costs
  // no Redis round trip; the count that decides a block is still shared through the counter.
  const blocked = new Map<string, number>();

  return {
    /** Counts one request of a partner; sets the headers; throws 429 past the limit. */
    async partner(
      partnerId: string,
      perMinute: number | null,
      reply: FastifyReply,
      test: boolean,
    ): Promise<void> {
      const limit = perMinute ?? options.defaultPerMinute;
      const at = now();
      // Test requests have a budget of their own, of the same size (docs/test-mode.md): a busy
      // test run never takes the live integration's requests.
      const bucket = test ? `partner-test:${partnerId}` : `partner:${partnerId}`;
      const { count, resetAt } = await options.counter.hit(bucket, MINUTE, at);
      const resetS = secondsUntil(resetAt, at);
      reply.header('RateLimit-Limit', String(limit));
      reply.header('RateLimit-Remaining', String(Math.max(0, limit - count)));
      reply.header('RateLimit-Reset', String(resetS));
      if (count > limit) {
        options.metrics.rateLimited.inc({ kind: 'partner', partner: partnerId });
        throw rateLimited(resetS, messages.rateLimited(limit, resetS));
      }
    },

    /**
     * Throws 429 while `address` is over its failed-authentication budget. `credential` names what
     * the caller should come back with: a partner's API secret, or an operator's token on the admin API.
     */
    assertNotBlocked(address: string, credential = 'a valid API secret'): void {
      const until = blocked.get(address);
      if (until === undefined) return;
      const at = now();
      if (until <= at) {
        blocked.delete(address);
        return;
      }
      options.metrics.rateLimited.inc({ kind: 'auth_failures', partner: 'none' });
      const retryS = secondsUntil(until, at);
      throw rateLimited(
        retryS,
        `Too many failed authentication attempts from this address; retry after ${retryS} s with ${credential}.`,
      );
    },

    /** Records a failed authentication from `address`; the next request may then be blocked. */
    async authFailed(address: string): Promise<void> {
      const at = now();
      const { count, resetAt } = await options.counter.hit(`authfail:${address}`, MINUTE, at);
      if (count >= options.authFailuresPerMinute) {
        blocked.set(address, resetAt);
        // Bounded: a flood from many addresses must not grow this map without end.
        if (blocked.size > 100_000) {
          for (const [key, until] of blocked) if (until <= at) blocked.delete(key);
        }
      }
    },
  };
}

export type RateLimits = ReturnType<typeof rateLimits>;

/**
 * The service's rate limits as configured: counted in this process, or shared by every instance
 * through Redis (REDIS_URL) with a local fallback while Redis is unreachable. `close` ends the
 * Redis connection.
 */
/** Where rate-limit counts live, and whether Redis answered lately (the operator's overview). */
interface RateLimitStore {
  kind: 'redis' | 'memory';
  ok: boolean;
  lastFallbackAt: string | null;
}

export function configuredRateLimits(
  config: Pick<
    Config,
    'REDIS_URL' | 'REDIS_TIMEOUT_MS' | 'RATE_LIMIT_PER_MINUTE' | 'AUTH_FAILURE_LIMIT_PER_MINUTE'
  >,
  logger: Logger,
  metrics: Metrics,
  /** The time the windows are counted by (tests move it instead of waiting for a new minute). */
  now: () => number = Date.now,
): { limits: RateLimits; store(): RateLimitStore; close(): Promise<void> } {
  let lastFallbackAt: number | undefined;
  const counter = config.REDIS_URL
    ? redisCounter({
        url: config.REDIS_URL,
        logger,
        commandTimeoutMs: config.REDIS_TIMEOUT_MS,
        onFallback: () => {
          lastFallbackAt = Date.now();
          metrics.rateLimitFallbacks.inc();
        },
      })
    : memoryCounter();
  return {
    store: () =>
      config.REDIS_URL
        ? {
            kind: 'redis',
            // Redis failed (and counts fell back to memory) in the last minute.
            ok: lastFallbackAt === undefined || Date.now() - lastFallbackAt > 60_000,
            lastFallbackAt: lastFallbackAt === undefined ? null : new Date(lastFallbackAt).toISOString(),
          }
        : { kind: 'memory', ok: true, lastFallbackAt: null },
    limits: rateLimits({
      counter,
      metrics,
      defaultPerMinute: config.RATE_LIMIT_PER_MINUTE,
      authFailuresPerMinute: config.AUTH_FAILURE_LIMIT_PER_MINUTE,
      now,
    }),
    close: () => counter.close(),
  };
}
