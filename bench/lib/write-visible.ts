import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type Measured, summarize } from './load.js';

/**
 * Write acknowledged → passed by a sync cursor: how long after a PUT is answered a partner's
 * cursor walk has both seen the listing and moved its cursor past it (the next poll from the
 * stored cursor no longer returns it). docs/sync.md promises this within the oldest open write;
 * on a quiet service, at once.
 */
export interface Http {
  get(pathAndQuery: string): Promise<{
    data: { id: string; externalReference: string; updatedAt: string }[];
    pagination: { nextCursor?: string; hasMore: boolean };
  }>;
  put(pathAndQuery: string, body: unknown): Promise<void>;
}

export interface VisibleResult extends Measured {
  /** Listings whose latest updatedAt the walker never saw (must be 0). */
  skipped: number;
}

export async function writeToVisible(
  http: Http,
  options: {
    samples: number;
    body: (reference: string) => unknown;
    run: string;
    /** PostgreSQL: hold a write transaction open this long, over and over, while measuring. */
    hold?: { databaseUrl: string; ms: number };
  },
): Promise<VisibleResult> {
  const since = new Date(Date.now() - 1000).toISOString();
  const query = `/listings?status=all&pageSize=200&updatedSince=${encodeURIComponent(since)}`;
  const copy = new Map<string, string>();
  /** Walks from `cursor` to the end, recording every listing; returns the cursor and what was seen. */
  const walk = async (cursor: string | undefined) => {
    const seen = new Set<string>();
    for (;;) {
      const page = await http.get(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const l of page.data) {
        seen.add(l.externalReference);
        if ((copy.get(l.id) ?? '') < l.updatedAt) copy.set(l.id, l.updatedAt);
      }
      cursor = page.pagination.nextCursor ?? cursor;
      if (!page.pagination.hasMore) return { cursor, seen };
    }
  };

  let holding = true;
  let holder: Promise<void> = Promise.resolve();
  let client: pg.Client | undefined;
  const refs: string[] = [];
  if (options.hold) {
    const target = `BENCH-VIS-${options.run}-held`;
    await http.put(`/listings/${target}`, options.body(target));
    refs.push(target);
    client = new pg.Client({ connectionString: options.hold.databaseUrl });
    await client.connect();
    const hold = options.hold.ms;
    const c = client;
    let began: () => void = () => {};
    const holdingNow = new Promise<void>((resolve) => {
      began = resolve;
    });
    // A writer of the service's own kind (write_stamp()) that writes at once and commits `hold`
    // later, again and again: at any moment one write transaction is open.
    holder = (async () => {
      while (holding) {
        await c.query('BEGIN');
        await c.query(
          `UPDATE listings SET mileage = coalesce(mileage, 0) + 1, updated_at = next_updated_at(updated_at) WHERE external_reference = $1`,
          [target],
        );
        began();
        await sleep(hold);
        await c.query('COMMIT');
      }
    })();
    await holdingNow;
  }

  const latencies: number[] = [];
  const started = performance.now();
  let cursor = (await walk(undefined)).cursor;
  try {
    for (let i = 0; i < options.samples; i++) {
      const reference = `BENCH-VIS-${options.run}-${i}`;
      await http.put(`/listings/${reference}`, options.body(reference));
      refs.push(reference);
      const acked = performance.now();
      let seen = false;
      for (;;) {
        const done = await walk(cursor);
        cursor = done.cursor;
        seen ||= done.seen.has(reference);
        // Passed: seen, and the next poll from the stored cursor does not return it again.
        if (seen && !(await walk(cursor)).seen.has(reference)) break;
        await sleep(10);
      }
      latencies.push(performance.now() - acked);
      // Writes at different moments of a held transaction's life.
      if (options.hold) await sleep(Math.random() * options.hold.ms);
    }
  } finally {
    holding = false;
    await holder;
    await client?.end();
  }
  // Skip nothing: after the last write, one more walk, then every listing's latest state must be known.
  await walk(cursor);
  const truth = await Promise.all(
    refs.map(async (r) => {
      const page = await http.get(`/listings?status=all&externalReference=${encodeURIComponent(r)}`);
      return page.data[0];
    }),
  );
  const skipped = truth.filter((l) => !l || copy.get(l.id) !== l.updatedAt).length;
  return { ...summarize(latencies, (performance.now() - started) / 1000, 0), skipped };
}
