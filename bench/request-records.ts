/**
 * What keeping request records costs a request (issue 20): `forecourt serve` on PostgreSQL at a
 * fixed 200 requests/s (autocannon's overallRate, in this process), half answered 200 (GET
 * /listings?pageSize=1) and half refused 400 (an unknown query parameter: a failure recorded one
 * by one), with recording on (the default) and off (REQUEST_RECORDS_RETENTION_DAYS=0), alternated
 * A/B/A/B on the same database so drift cancels out. Goal: p99 overhead under 1 ms.
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
const ROUNDS = values.smoke ? 1 : 2;
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
      requests: [{ path: `${API}/listings?pageSize=1` }, { path: `${API}/listings?colour=red` }],
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
  off.push(await side(false));
  on.push(await side(true));
}
const mean = (sides: Side[], key: 'p50' | 'p99') =>
  Math.round((sides.reduce((sum, s) => sum + s[key], 0) / sides.length) * 100) / 100;
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
  on: { p50: mean(on, 'p50'), p99: mean(on, 'p99'), runs: on },
  off: { p50: mean(off, 'p50'), p99: mean(off, 'p99'), runs: off },
  p99OverheadMs: Math.round((mean(on, 'p99') - mean(off, 'p99')) * 100) / 100,
};
log(`p99 overhead ${result.p99OverheadMs} ms (on ${result.on.p99}, off ${result.off.p99})`);
process.stdout.write(`${JSON.stringify(result)}\n`);
