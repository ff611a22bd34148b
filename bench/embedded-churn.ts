/**
 * A partner re-pushing the same listings for a while, on the embedded database: what its data
 * directory and its list pages become. Each round bulk-upserts the same `--listings` references
 * (new prices: real updates), two requests at a time, for `--duration` seconds; the service's
 * maintenance runs at its configured interval (BENCH_SERVICE_ENV="EMBEDDED_VACUUM_INTERVAL_MS=0"
 * turns it off). Prints the listings table's size before and after, the update rate, the
 * service's resident memory at the end, and how long each maintenance pass held the connection.
 *
 *   node --import tsx bench/embedded-churn.ts --data-dir DIR --dataset bench/.data/pglite-100k.json
 *     [--listings 10000] [--duration 60]
 * Uses the data directory as it finds it: copy a pristine one first.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { request } from 'undici';
import { startService } from './lib/processes.js';
import { type Dataset, listingBody, secretOf } from './lib/scenarios.js';
import { rssMb } from './lib/usage.js';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    dataset: { type: 'string' },
    listings: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '60' },
  },
});
const dataDir = values['data-dir'];
if (!dataDir || !values.dataset) throw new Error('--data-dir and --dataset are required');
const dataset = JSON.parse(readFileSync(values.dataset, 'utf8')) as Dataset;
const listings = Number(values.listings);
const durationMs = Number(values.duration) * 1000;

/** The listings table's size on disk (heap, indexes, TOAST), read with the service stopped. */
async function sizeMb(): Promise<number> {
  const db = await PGlite.create(`${dataDir}/pglite`);
  try {
    const rows = await db.query<{ mb: number }>(
      `SELECT round(pg_total_relation_size('listings') / 1048576.0)::int AS mb`,
    );
    return rows.rows[0]!.mb;
  } finally {
    await db.close();
  }
}

const before = await sizeMb();
// At debug, every maintenance pass that did something is logged (the quicker ones are at debug).
const service = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'debug' });
const headers = {
  authorization: `Bearer ${secretOf(dataset, 'global')}`,
  'content-type': 'application/json',
};
const batches = Math.ceil(listings / 100);
let updated = 0;
let round = 0;
const until = Date.now() + durationMs;
async function worker(first: number): Promise<void> {
  for (let batch = first; Date.now() < until; batch = (batch + 2) % batches) {
    if (batch === 0) round += 1;
    const items = Array.from({ length: 100 }, (_, i) => ({
      ...listingBody(`BENCH-CHURN-${batch}-${i}`, i),
      price: 10_000 + round,
    }));
    const res = await request(`${service.url}/api/external/v1/listings/bulk-upsert`, {
      method: 'POST',
      headers,
      body: JSON.stringify(items),
      dispatcher: service.dispatcher,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`bulk-upsert answered ${res.statusCode}: ${text}`);
    updated += 100;
  }
}
const startedAt = Date.now();
// Two requests at a time, on alternate batches (one worker when there is a single batch).
await Promise.all(batches > 1 ? [worker(0), worker(1)] : [worker(0)]);
const seconds = (Date.now() - startedAt) / 1000;
const rss = rssMb(service.pid);
// Each pass that did something logs how long it held the embedded database's only connection.
const passMs = readFileSync(service.log, 'utf8')
  .split('\n')
  .filter((line) => line.includes('vacuumed and analyzed'))
  .map((line) => (JSON.parse(line) as { ms: number }).ms);
await service.stop();
const after = await sizeMb();
console.log(
  JSON.stringify({
    listings,
    seconds: Math.round(seconds),
    writesPerSecond: Math.round(updated / seconds),
    listingsTableMb: { before, after },
    serviceRssMb: rss,
    maintenancePasses: passMs.length,
    longestPassMs: Math.max(0, ...passMs),
    passMs,
  }),
);
