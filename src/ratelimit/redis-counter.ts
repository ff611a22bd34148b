import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import { memoryCounter, type WindowCounter, windowStart } from './counter.js';

interface RedisCounterOptions {
  url: string;
  logger: Logger;
  /** A Redis round trip slower than this counts as an outage for that request. */
  commandTimeoutMs: number;
  /** Called each time a hit fell back to the in-process counter. */
  onFallback?: () => void;
}

/**
 * Counts shared by every instance through Redis: one round trip per hit (INCR and PEXPIRE in one
 * MULTI). When Redis is unreachable or slow, the hit is counted in this process instead: limits
 * then hold per instance rather than across instances, and a Redis outage never fails a request
 * or holds it longer than commandTimeoutMs. (Failing closed would turn a cache outage into a full
 * API outage; failing fully open would drop protection exactly when something is already wrong.)
 */
/** Resolves like `work`, or rejects once `ms` have passed without an answer. */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  work.catch(() => {}); // a late failure after the deadline is not an unhandled rejection
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function redisCounter(options: RedisCounterOptions): WindowCounter {
  const { logger } = options;
  // Loaded only when REDIS_URL is set: the client library holds about 10 MB a service without
  // Redis would carry for nothing.
  const { createClient } = createRequire(import.meta.url)('redis') as typeof import('redis');
  const local = memoryCounter();
  let lastWarning = 0;
  let skipUntil = 0;
  const client = createClient({
    url: options.url,
    // Commands are rejected at once while disconnected instead of queueing behind a reconnect.
    disableOfflineQueue: true,
    // A hung server must not collect an unbounded queue of our commands.
    commandsQueueMaxLength: 10_000,
    socket: {
      connectTimeout: 2_000,
      // Keep trying in the background, at most every 2 s, for as long as the service runs.
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000),
    },
  });
  client.on('error', (error: Error) =>
    warn('Redis unavailable: rate limits are per instance until it returns', error),
  );
  client.on('ready', () => logger.info('Redis connected: rate limits are shared across instances'));
  client.connect().catch(() => {
    // The reconnect strategy keeps trying; 'error' has already been logged.
  });

  function warn(message: string, error: unknown) {
    const now = Date.now();
    if (now - lastWarning < 30_000) return;
    lastWarning = now;
    logger.warn({ err: { message: (error as Error)?.message } }, message);
  }

  return {
    async hit(key, windowMs, now) {
      const start = windowStart(now, windowMs);
      const redisKey = `forecourt:rl:${key}:${windowMs}:${start}`;
      try {
        if (!client.isReady) throw new Error('not connected');
        if (Date.now() < skipUntil) throw new Error('Redis failed a moment ago');
        const exec = client
          .multi()
          .incr(redisKey)
          .pExpire(redisKey, windowMs + 5_000)
          .exec();
        // Our own deadline: a Redis that accepts the connection but stops answering would
        // otherwise hold the request for as long as it hangs.
        const [count] = (await within(exec, options.commandTimeoutMs)) as unknown as [number, number];
        return { count: Number(count), resetAt: start + windowMs };
      } catch (error) {
        // After a failure, go straight to the local count for a second: while Redis hangs, only
        // one request a second pays the timeout instead of every one.
        if (Date.now() >= skipUntil) skipUntil = Date.now() + 1_000;
        options.onFallback?.();
        warn('Redis unavailable: rate limits are per instance until it returns', error);
        return local.hit(key, windowMs, now);
      }
    },
    async close() {
      await local.close();
      // Nothing to flush: counts expire by themselves. destroy() also stops a pending reconnect.
      if (client.isOpen) client.destroy();
    },
  };
}
