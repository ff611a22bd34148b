/**
 * Fixed-window hit counters. Windows are aligned to the epoch (a minute window starts at :00), so
 * every instance agrees on the current window without talking to the others; only the counts are
 * shared, through Redis when REDIS_URL is set.
 */
interface Hit {
  /** Hits in this window so far, this one included. */
  count: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
}

export interface WindowCounter {
  hit(key: string, windowMs: number, now: number): Promise<Hit>;
  close(): Promise<void>;
}

export const windowStart = (now: number, windowMs: number) => Math.floor(now / windowMs) * windowMs;

/** Counts in this process: right for one instance, and the fallback when Redis is unreachable. */
export function memoryCounter(): WindowCounter {
  // One bucket per window (length and start); ended windows are dropped whole, so memory stays
  // bounded by the keys (partners, client addresses) active within one window.
  const buckets = new Map<string, { resetAt: number; counts: Map<string, number> }>();
  return {
    async hit(key, windowMs, now) {
      const start = windowStart(now, windowMs);
      const id = `${windowMs}:${start}`;
      let bucket = buckets.get(id);
      if (!bucket) {
        for (const [old, { resetAt }] of buckets) if (resetAt <= now) buckets.delete(old);
        bucket = { resetAt: start + windowMs, counts: new Map() };
        buckets.set(id, bucket);
      }
      const count = (bucket.counts.get(key) ?? 0) + 1;
      bucket.counts.set(key, count);
      return { count, resetAt: bucket.resetAt };
    },
    async close() {
      buckets.clear();
    },
  };
}
