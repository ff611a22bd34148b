/**
 * What keeping request records costs a request (issue 20): `forecourt serve` on PostgreSQL at a
 * fixed 200 requests/s (autocannon's overallRate, in this process), half answered 200 (GET
 * /reference/enums) and half refused 400 (the same with an unknown query parameter: a failure
 * recorded one by one), with recording on (the default) and off (REQUEST_RECORDS_RETENTION_DAYS=0),
 * alternated (off/on, on/off, …) on the same database so drift and order cancel out. Requests that
 * need no database keep the latency of the rest small and steady, so what recording adds shows
 * (with GET /listings, the p99 moved by ±10 ms between identical runs). Goal: p99 overhead < 1 ms.
 *
 *   node --import tsx bench/request-records.ts --database-url postgres://…/db [--duration 20] [--smoke]
 * Prints the result as JSON on stdout (bench/all.ts runs it).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { request } from 'undici';
import { percentile } from './lib/load.js';
import { startService } from './lib/processes.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    duration: { type: 'string', default: '20' },
    rate: { type: 'string', default: '200' },
    smoke: { type: 'boolean', default: false },
  },
});
const log = (msg: string) => process.stderr.write(`[bench request-records] ${msg}\n`);
const databaseUrl = values['database-url'];
if (!databaseUrl) throw new Error('--database-url is required');
const durationS = values.smoke ? 2 : Number(values.duration);
const rate = Number(values.rate);
const ROUNDS = values.smoke ? 1 : 5;
const API = '/api/external/v1';

export interface Side {
  p50: number;
  p99: number;
  requests: number;
  failuresRecorded: number;
}

async function side(recording: boolean): Promise<Side> {
  const adminToken = randomBytes(24).toString('hex');
  const service = await startService({
    DATABASE_URL: databaseUrl!,
    ADMIN_TOKEN: adminToken,
    // Every failure kept one by one (100 a second is past the default 1,000 a minute).
    REQUEST_RECORDS_PER_MINUTE: '100000',
    ...(recording ? {} : { REQUEST_RECORDS_RETENTION_DAYS: '0' }),
  });
  let partnerId: string;
  const latencies: number[] = [];
  try {
    const created = await request(`${service.url}/api/admin/v1/partners`, {
      method: 'POST',
      dispatcher: service.dispatcher,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `bench-records-${randomBytes(3).toString('hex')}`,
        scopes: ['read:listings'],
        access: { scope: 'global' },
      }),
    });
    const { data } = (await created.body.json()) as { data: { id: string; secret: string } };
    partnerId = data.id;
    const statuses = new Map<number, number>();
    const instance = autocannon({
      url: service.url,
      connections: 10,
      overallRate: rate,
      duration: durationS,
      headers: { authorization: `Bearer ${data.secret}` },
      requests: [{ path: `${API}/reference/enums` }, { path: `${API}/reference/enums?colour=red` }],
      tlsOptions: { rejectUnauthorized: false },
    } as autocannon.Options) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      latencies.push(ms);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    await instance;
    if ([...statuses.keys()].some((s) => s !== 200 && s !== 400))
      throw new Error(`unexpected statuses: ${JSON.stringify([...statuses])}`);
  } finally {
    // A graceful stop: the recorder writes what it holds before the process exits.
    await service.stop();
  }
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows } = await db.query('SELECT count(*)::int AS n FROM request_failures WHERE partner_id = $1', [
    partnerId,
  ]);
  await db.end();
  latencies.sort((a, b) => a - b);
  const result = {
    p50: Math.round(percentile(latencies, 0.5) * 100) / 100,
    p99: Math.round(percentile(latencies, 0.99) * 100) / 100,
    requests: latencies.length,
    failuresRecorded: rows[0].n as number,
  };
  log(
    `recording ${recording ? 'on ' : 'off'}: p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.requests} requests, ${result.failuresRecorded} failures recorded`,
  );
  return result;
}

const on: Side[] = [];
const off: Side[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const recording of round % 2 ? [true, false] : [false, true])
    (recording ? on : off).push(await side(recording));
}
// Medians of the runs: one run's p99 can jump by 10 ms (a scheduling hiccup on 2 shared cores),
// and a mean would carry that into the difference.
const median = (sides: Side[], key: 'p50' | 'p99') => {
  const sorted = sides.map((s) => s[key]).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 100) / 100;
};
const spread = (sides: Side[]) =>
  Math.round((Math.max(...sides.map((s) => s.p99)) - Math.min(...sides.map((s) => s.p99))) * 100) / 100;
// Recording on must have kept every refused request; off, none.
const expected = (s: Side) => Math.floor(s.requests / 2);
if (on.some((s) => s.failuresRecorded < expected(s) - 10) || off.some((s) => s.failuresRecorded !== 0))
  throw new Error(
    `records: on ${on.map((s) => s.failuresRecorded)}, off ${off.map((s) => s.failuresRecorded)}`,
  );
const result = {
  rate,
  durationS,
  rounds: ROUNDS,
  on: { p50: median(on, 'p50'), p99: median(on, 'p99'), runs: on },
  off: { p50: median(off, 'p50'), p99: median(off, 'p99'), runs: off },
  p99OverheadMs: Math.round((median(on, 'p99') - median(off, 'p99')) * 100) / 100,
  /** How far apart the p99s of identical runs (recording off) were: the noise of the difference. */
  p99SpreadOffMs: spread(off),
};
log(
  `p99 overhead ${result.p99OverheadMs} ms (medians: on ${result.on.p99}, off ${result.off.p99}; off runs spread ${result.p99SpreadOffMs} ms)`,
);
process.stdout.write(`${JSON.stringify(result)}\n`);
