/**
 * The image checker's benchmark (issue 43), against `forecourt serve` as its own process on
 * PostgreSQL, with the images served by local servers in a third process (bench/lib/image-hosts.ts:
 * `--hosts` servers, each a host of its own to the checker's per-host limits):
 *   - checks a second: a backlog of fresh image URLs (listings written by bulk upsert, 5 images
 *     each, spread over the hosts) checked to the end by one instance at IMAGE_CHECK_CONCURRENCY;
 *   - single PUT and bulk upsert (100 listings a request) throughput with the checker busy (a
 *     backlog larger than it can check during the run) against idle (nothing due), alternated
 *     idle/busy/busy/idle on the same database so drift cancels out. The writes themselves reuse
 *     image URLs already checked, so they add no checks of their own. Goal: busy ÷ idle ≥ 0.95.
 * Load comes from autocannon in this process; the service and the image servers run in their own.
 *
 *   node --import tsx bench/image-checks.ts [--listings 20000] [--connections 2] [--duration 10]
 *     [--concurrency 8] [--hosts 16] [--smoke]
 * Uses the database bench_image_checks on the server of BENCH_PG (default
 * postgres://root@127.0.0.1:5432), made afresh and dropped at the end. Prints the result as JSON on
 * stdout and a summary line on stderr; without --smoke it also writes
 * bench/results/image-checks-<date>.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { API, serviceApi } from './lib/api.js';
import { postgresDataset, sql } from './lib/datasets.js';
import { load } from './lib/load.js';
import { startService } from './lib/processes.js';
import { writeRecord } from './lib/record.js';
import { type Dataset, listingBody, putBody } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
    hosts: { type: 'string', default: '16' },
    smoke: { type: 'boolean', default: false },
  },
});
const log = (msg: string) => process.stderr.write(`[bench image-checks] ${msg}\n`);
const HERE = import.meta.dirname;
const smoke = values.smoke;
const connections = Number(values.connections);
const durationS = smoke ? 1 : Number(values.duration);
const concurrency = Number(values.concurrency);
const hosts = Number(values.hosts);
/** Listings whose images make the checks-a-second backlog (5 URLs each). */
const RATE_LISTINGS = smoke ? 40 : 2000;
const BULK = 100;
const NAME = 'bench_image_checks';
const run = randomBytes(3).toString('hex');

// The image servers, in a process of their own.
const imageProcess: ChildProcess = spawn(
  process.execPath,
  ['--import', 'tsx', path.join(HERE, 'lib', 'image-hosts.ts'), '--hosts', String(hosts)],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
process.on('exit', () => imageProcess.kill('SIGKILL'));
const origins = await new Promise<string[]>((resolve, reject) => {
  let out = '';
  imageProcess.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as string[]);
  });
  imageProcess.once('exit', (code) => reject(new Error(`image servers exited (${code})`)));
});

const databaseUrl = await postgresDataset(NAME, smoke ? 1000 : Number(values.listings), true);
const dataset = JSON.parse(readFileSync(path.join(HERE, '.data', `${NAME}.json`), 'utf8')) as Dataset;
const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();
const adminToken = randomBytes(24).toString('base64url');
const service = await startService({
  DATABASE_URL: databaseUrl,
  ADMIN_TOKEN: adminToken,
  IMAGE_CHECK_ALLOW_LOOPBACK: 'true',
  IMAGE_CHECK_CONCURRENCY: String(concurrency),
});
const writer = dataset.globalSecret;

const api = serviceApi(service, adminToken);
/** The writer partner's call: the answer's `data`, any status from 300 up an error. */
const call = (method: string, urlPath: string, body?: unknown) =>
  api.ok(method, `${API}${urlPath}`, writer, body);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Image URLs of this run under `tag`: unique, spread round-robin over the hosts. */
let spread = 0;
const freshImages = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${origins[spread++ % hosts]}/photo.jpg?${run}-${tag}-${i}`);
/** The images every measured write carries: checked once in the warm-up, so writes add no checks. */
const FIXED = Array.from({ length: 5 }, (_, i) => `${origins[i % hosts]}/photo.jpg?${run}-fixed-${i}`);
const item = (reference: string, i: number, images: string[]) => ({ ...listingBody(reference, i), images });

/** Writes `count` listings with fresh images (bulk upsert); answers their image URLs. */
async function backlog(tag: string, count: number): Promise<number> {
  for (let b = 0; b < count; b += BULK) {
    const items = Array.from({ length: Math.min(BULK, count - b) }, (_, i) =>
      item(`BENCH-IC-${run}-${tag}-${b + i}`, b + i, freshImages(`${tag}-${b + i}`, 5)),
    );
    const result = await call('POST', '/listings/bulk-upsert', items);
    if (result.errorCount) throw new Error(`backlog ${tag}: ${JSON.stringify(result.errors).slice(0, 500)}`);
  }
  return count * 5;
}

/** Image URLs of this run: how many were checked to the end, and how many are still due. */
async function progress(): Promise<{ checked: number; due: number }> {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE last_checked_at IS NOT NULL)::int AS checked,
            count(*) FILTER (WHERE last_checked_at IS NULL)::int AS due
       FROM image_checks WHERE url LIKE $1`,
    [`%/photo.jpg?${run}-%`],
  );
  return rows[0] as { checked: number; due: number };
}

async function drained(limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while ((await progress()).due > 0) {
    if (Date.now() > deadline) throw new Error(`the checker did not drain within ${limitMs / 1000} s`);
    await sleep(100);
  }
}

/** Each throughput run starts from the same state (as bench/webhooks.ts does). */
async function settle(): Promise<void> {
  await db.query('VACUUM (ANALYZE) listings, image_checks');
  await db.query('CHECKPOINT');
}

async function throughput(label: string): Promise<{ put: number; bulk: number; checksDuring: number }> {
  await settle();
  const before = (await progress()).checked;
  let n = 0;
  const put = await load({
    url: `${service.url}${API}/listings/x`,
    connections,
    durationS,
    method: 'PUT',
    headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...putBody('ignored', 1), images: FIXED }),
    path: () => `${API}/listings/BENCH-IC-P-${run}-${label}-${n++}`,
  });
  // Bulk: 100 new listings a request, references made unique by autocannon's [<id>].
  const bulkBody = JSON.stringify(
    Array.from({ length: BULK }, (_, i) => item(`BIC-${run}-${label}-[<id>]-${i}`, i, FIXED)),
  );
  const bulk = await load({
    url: `${service.url}${API}/listings/bulk-upsert`,
    connections,
    durationS,
    method: 'POST',
    headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
    body: bulkBody,
    idReplacement: true,
  });
  if (put.errors || bulk.errors)
    throw new Error(`${label}: ${put.errors} PUT and ${bulk.errors} bulk errors`);
  const checksDuring = (await progress()).checked - before;
  log(
    `${label}: ${put.requestsPerSecond} PUT/s, ${bulk.requestsPerSecond} bulk/s (×${BULK} listings), ${checksDuring} checks meanwhile`,
  );
  return { put: put.requestsPerSecond, bulk: bulk.requestsPerSecond, checksDuring };
}

try {
  // Only this run's images are checked: whatever the dataset left due waits past the run.
  await db.query(
    `UPDATE image_checks SET next_check_at = now() + interval '365 days' WHERE url NOT LIKE 'http://127.0.0.1:%'`,
  );
  // Warm-up: the fixed images checked once.
  await call('PUT', `/listings/BENCH-IC-${run}-fixed`, item(`BENCH-IC-${run}-fixed`, 0, FIXED));
  await drained(60_000);

  // Checks a second: a backlog written at once, timed to the last check.
  const urls = await backlog('rate', RATE_LISTINGS);
  const started = performance.now();
  await drained(600_000);
  const seconds = (performance.now() - started) / 1000;
  const checksPerSecond = Math.round((urls / seconds) * 10) / 10;
  log(`checks a second: ${checksPerSecond} (${urls} images over ${hosts} hosts, concurrency ${concurrency})`);

  // Busy against idle: a busy side gets a backlog of twice what the checker does in the two runs.
  const busyUrls = Math.max(50, Math.ceil(checksPerSecond * durationS * 2 * 2));
  await throughput('warm-up');
  await drained(600_000);
  const idle: Awaited<ReturnType<typeof throughput>>[] = [];
  const busy: Awaited<ReturnType<typeof throughput>>[] = [];
  for (const side of ['idle', 'busy', 'busy', 'idle'] as const) {
    if (side === 'idle') {
      await drained(600_000);
      idle.push(await throughput(`idle-${idle.length}`));
    } else {
      await backlog(`busy-${busy.length}`, Math.ceil(busyUrls / 5));
      const measured = await throughput(`busy-${busy.length}`);
      if ((await progress()).due === 0) log(`busy-${busy.length}: the backlog ran out during the run`);
      busy.push(measured);
    }
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const ratio = (key: 'put' | 'bulk') =>
    Math.round((sum(busy.map((s) => s[key])) / sum(idle.map((s) => s[key]))) * 1000) / 1000;
  const result = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB`,
    smoke,
    settings: { concurrency, hosts, connections, durationS, datasetListings: dataset.listings },
    checksPerSecond,
    throughput: { idle, busy, putRatio: ratio('put'), bulkRatio: ratio('bulk') },
  };
  log(
    `RESULT: ${checksPerSecond} checks/s; busy÷idle: PUT ${result.throughput.putRatio}, bulk ${result.throughput.bulkRatio} (goal ≥ 0.95)${smoke ? ' [smoke: not a measurement]' : ''}`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (!smoke) {
    const dir = path.join(HERE, 'results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `image-checks-${result.date.slice(0, 10)}.json`);
    writeRecord(file, result);
    log(`written ${file}`);
  }
} finally {
  await service.stop();
  await db.end();
  imageProcess.kill('SIGTERM');
  await sql('postgres', `DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
}
