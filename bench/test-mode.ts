/**
 * Live lists and writes beside a busy test partner (issue 44, docs/test-mode.md "Live
 * performance"). Against `forecourt serve` in its own process, on a bench/dataset.ts database:
 *   - a neighbour partner (global, rate limit --neighbour-rate a second) is created and given a
 *     test secret through the admin API, as an operator would; its test data is filled to the
 *     limit (10,000 test listings, bulk upserts with the test secret); it also holds live
 *     listings under the references its load rewrites (--neighbour-references), so the same load
 *     sent live is rewrites too;
 *   - the dataset's global partner (live) is measured: list-global's page
 *     (`GET /listings?pageSize=50&status=active`) then `PUT` of a new listing, each --duration
 *     seconds at --connections, in phases:
 *       empty      no test listings at all (what holding test data costs live: idle ÷ empty)
 *       idle       10,000 test listings, the neighbour idle
 *       busy-test  the neighbour busy with its test secret (bench/lib/neighbour.ts, a process of
 *                  its own: list pages (--neighbour-reads of them), PUTs and bulk upserts of
 *                  its listings at --neighbour-rate, its whole rate-limit budget)
 *       busy-live  the very same load with the neighbour's live secret
 *     in --rounds rounds, the order turned each round so drift cancels out. The claim tested is
 *     busy-test ≥ busy-live: test traffic costs live partners no more than the same traffic live
 *     (any busy neighbour takes CPU on two shared cores, whatever its mode).
 *
 *   node --import tsx bench/test-mode.ts --database-url postgres://root@127.0.0.1:5432/bench_100k
 *     [--data-dir DIR --dataset FILE (PGlite, run on a copy)] [--duration 10] [--connections 2]
 *     [--rounds 3] [--neighbour-rate 50] [--neighbour-references 1000] [--neighbour-reads 0.5]
 *     [--compact] [--smoke]
 * --compact (PostgreSQL): VACUUM FULL of the written tables before every phase. Without it the
 * "empty" phases after a wipe of the test data insert into the space it freed, and idle ÷ empty
 * reads low (0.71–0.74 for PUTs in three runs; 1.02 with it).
 * --smoke (without --database-url or --data-dir: a fresh 1,000-listing database, dropped after)
 * proves it runs: 1,000 test listings, 1 s scenarios, one round; it judges nothing but errors.
 * It writes to the database (the neighbour, its listings, the measured PUTs): use a loaded copy.
 * Prints the result as JSON on stdout and a markdown table on stderr.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ADMIN, API, serviceApi } from './lib/api.js';
import { postgresDataset, sql } from './lib/datasets.js';
import { load, type Measured } from './lib/load.js';
import { startService } from './lib/processes.js';
import { writeRecord } from './lib/record.js';
import { type Dataset, listingBody, putBody } from './lib/scenarios.js';
import { cpuMs } from './lib/usage.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'data-dir': { type: 'string' },
    dataset: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    'neighbour-rate': { type: 'string', default: '50' },
    'neighbour-references': { type: 'string', default: '1000' },
    // The share of list pages in the neighbour's load (the rest writes): 0 for writes only.
    'neighbour-reads': { type: 'string', default: '0.5' },
    out: { type: 'string' },
    // PostgreSQL: VACUUM FULL the tables listing writes fill before each phase, so no phase's
    // inserts reuse the space a wipe of the test data freed (slow on large datasets).
    compact: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
  },
});
const log = (msg: string) => process.stderr.write(`[bench test-mode] ${msg}\n`);
const HERE = import.meta.dirname;
const smoke = values.smoke;
const durationS = smoke ? 1 : Number(values.duration);
const connections = Number(values.connections);
const rounds = smoke ? 1 : Number(values.rounds);
const neighbourRate = Number(values['neighbour-rate']);
const neighbourReads = Number(values['neighbour-reads']);
/** The most test listings a partner can hold (docs/test-mode.md). */
const TEST_LIMIT = 10_000;
const testListings = smoke ? 1000 : TEST_LIMIT;
const references = Math.min(Number(values['neighbour-references']), testListings);
const run = randomBytes(3).toString('hex');
const prefix = `BENCH-TM-${run}-`;

// --- The database: given (PostgreSQL or a copy of a PGlite directory), or a smoke run's own.
const SMOKE_DB = 'bench_test_mode_smoke';
let databaseUrl = values['database-url'];
let ownDatabase = false;
let pgliteCopy: string | undefined;
if (!databaseUrl && !values['data-dir']) {
  if (!smoke) throw new Error('--database-url or --data-dir is required (or --smoke)');
  databaseUrl = await postgresDataset(SMOKE_DB, 1000, true);
  ownDatabase = true;
}
const datasetFile =
  values.dataset ??
  path.join(HERE, '.data', `${databaseUrl ? new URL(databaseUrl).pathname.slice(1) : 'embedded'}.json`);
const dataset = JSON.parse(readFileSync(datasetFile, 'utf8')) as Dataset;
if (!databaseUrl) {
  // PGlite: a fresh copy each run (writes leave a directory slower, docs/benchmarks.md "Method").
  pgliteCopy = mkdtempSync(path.join(os.tmpdir(), 'forecourt-test-mode-'));
  cpSync(path.resolve(values['data-dir']!), pgliteCopy, { recursive: true });
}
const db = databaseUrl ? new pg.Client({ connectionString: databaseUrl }) : undefined;
await db?.connect();

const adminToken = randomBytes(24).toString('base64url');
const service = await startService({
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: pgliteCopy! }),
  ADMIN_TOKEN: adminToken,
  // The datasets' image URLs resolve nowhere: the checker stays off, as in bench/run.ts.
  IMAGE_CHECK_CONCURRENCY: '0',
});

const { call, ok, createPartner } = serviceApi(service, adminToken);

/** Bulk upserts of `${prefix}${i}`, i < count, 100 a request, two at a time. */
async function write(secret: string, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let from = next; from < count; from = next) {
      next += 100;
      const items = Array.from({ length: Math.min(100, count - from) }, (_, k) =>
        listingBody(`${prefix}${from + k}`, from + k),
      );
      const result = await ok('POST', `${API}/listings/bulk-upsert`, secret, items);
      if (result.errorCount) throw new Error(`bulk upsert: ${JSON.stringify(result.errors).slice(0, 500)}`);
    }
  };
  await Promise.all([worker(), worker()]);
}

/** Each phase starts from the same state (PostgreSQL; PGlite's maintenance runs by itself). */
async function settle(): Promise<void> {
  if (values.compact) {
    await db?.query('VACUUM FULL listings, listing_images, listing_status_history, image_checks');
    await db?.query('ANALYZE listings, listing_images, listing_status_history, image_checks');
  } else await db?.query('VACUUM (ANALYZE) listings');
}

// --- The neighbour: created and given its test secret through the admin API.
const neighbour = await createPartner({
  name: `bench-test-mode-${run}`,
  scopes: ['read:listings', 'write:listings'],
  rateLimitPerMinute: neighbourRate * 60,
});
const liveSecret: string = neighbour.secret;
const testSecret: string = (await ok('POST', `${ADMIN}/partners/${neighbour.id}/test-secret`, adminToken))
  .secret;
log(`neighbour ${neighbour.id}: ${references} live listings, test data up to ${testListings}`);
await write(liveSecret, references);

async function fill(): Promise<number> {
  const started = performance.now();
  await write(testSecret, testListings);
  if (testListings === TEST_LIMIT) {
    // At the limit: one more new test listing is refused.
    const more = await call(
      'PUT',
      `${API}/listings/${prefix}over`,
      testSecret,
      listingBody(`${prefix}over`, 0),
    );
    if (more.status !== 422 || more.body?.error?.code !== 'TEST_LIMIT_REACHED')
      throw new Error(
        `expected 422 TEST_LIMIT_REACHED at the limit, got ${more.status} ${more.text.slice(0, 300)}`,
      );
  }
  const seconds = (performance.now() - started) / 1000;
  log(`filled ${testListings} test listings in ${seconds.toFixed(1)} s`);
  return seconds;
}
async function wipe(): Promise<void> {
  const { deleted } = await ok('DELETE', `${API}/test-data`, testSecret);
  if (deleted !== testListings) throw new Error(`test-data deleted ${deleted}, expected ${testListings}`);
}

// --- The neighbour's load, in a process of its own.
interface NeighbourResult {
  seconds: number;
  streams: (Measured & { kind: string; askedPerSecond: number; rateLimited: number })[];
}
async function startNeighbour(secret: string): Promise<{ stop(): Promise<NeighbourResult> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(HERE, 'lib', 'neighbour.ts'),
      JSON.stringify({
        url: service.url,
        secret,
        rate: neighbourRate,
        prefix,
        references,
        reads: neighbourReads,
      }),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  process.on('exit', () => child.kill('SIGKILL'));
  let out = '';
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    for (let at = out.indexOf('\n'); at >= 0; at = out.indexOf('\n')) {
      const line = out.slice(0, at);
      out = out.slice(at + 1);
      const w = waiting.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      const l = lines.shift();
      if (l !== undefined) return resolve(l);
      waiting.push(resolve);
      child.once('exit', (code) => reject(new Error(`neighbour exited (${code})`)));
    });
  if ((await nextLine()) !== 'ready') throw new Error('neighbour did not start');
  return {
    async stop() {
      child.stdin!.write('stop\n');
      return JSON.parse(await nextLine()) as NeighbourResult;
    },
  };
}

// --- One phase: the live partner's list pages, then its PUTs of new listings.
type PhaseName = 'empty' | 'idle' | 'busy-test' | 'busy-live';
interface Phase {
  phase: PhaseName;
  round: number;
  list: Measured;
  put: Measured;
  /** The service's CPU (user + system) over the phase, ms a second. */
  serviceCpuMsPerS?: number;
  neighbour?: NeighbourResult;
}
const liveAuth = { authorization: `Bearer ${dataset.globalSecret}` };
let puts = 0;
async function phase(name: PhaseName, round: number, seconds = durationS): Promise<Phase> {
  await settle();
  const busy =
    name === 'busy-test'
      ? await startNeighbour(testSecret)
      : name === 'busy-live'
        ? await startNeighbour(liveSecret)
        : undefined;
  // The neighbour's first second (connections, its first burst) is not measured.
  if (busy) await new Promise((r) => setTimeout(r, 1000));
  const cpuBefore = cpuMs(service.pid);
  const started = performance.now();
  const list = await load({
    url: `${service.url}${API}/listings?pageSize=50&status=active`,
    connections,
    durationS: seconds,
    headers: liveAuth,
  });
  const put = await load({
    url: `${service.url}${API}/listings/x`,
    connections,
    durationS: seconds,
    method: 'PUT',
    headers: { ...liveAuth, 'content-type': 'application/json' },
    body: JSON.stringify(putBody('ignored', 1)),
    path: () => `${API}/listings/BENCH-TM-PUT-${run}-${puts++}`,
  });
  const cpuAfter = cpuMs(service.pid);
  const elapsed = (performance.now() - started) / 1000;
  const neighbourResult = await busy?.stop();
  if (list.errors || put.errors) throw new Error(`${name}: ${list.errors} list and ${put.errors} PUT errors`);
  const neighbourErrors = neighbourResult?.streams.reduce((s, x) => s + x.errors, 0) ?? 0;
  if (neighbourErrors) throw new Error(`${name}: the neighbour had ${neighbourErrors} errors`);
  const result: Phase = {
    phase: name,
    round,
    list,
    put,
    ...(cpuBefore !== undefined && cpuAfter !== undefined
      ? { serviceCpuMsPerS: Math.round((cpuAfter - cpuBefore) / elapsed) }
      : {}),
    ...(neighbourResult ? { neighbour: neighbourResult } : {}),
  };
  const n = neighbourResult?.streams.map((s) => `${s.kind} ${s.requestsPerSecond}/s`).join(', ');
  log(
    `round ${round} ${name}: list ${list.requestsPerSecond}/s p99 ${list.p99} ms, PUT ${put.requestsPerSecond}/s p99 ${put.p99} ms${n ? `; neighbour ${n}` : ''}`,
  );
  return result;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const r2 = (v: number) => Math.round(v * 100) / 100;
const r3 = (v: number) => Math.round(v * 1000) / 1000;

try {
  const fills: number[] = [];
  // Warm-up, discarded.
  await phase('empty', -1, Math.min(durationS, 2));
  const phases: Phase[] = [];
  let hasTestData = false;
  const FULL: PhaseName[] = ['idle', 'busy-test', 'busy-live'];
  for (let round = 0; round < rounds; round++) {
    // The three phases with test data, turned each round and reversed every other one.
    const turned = [...FULL.slice(round % 3), ...FULL.slice(0, round % 3)];
    const order = round % 2 ? turned.reverse() : turned;
    if (!hasTestData) {
      phases.push(await phase('empty', round));
      fills.push(await fill());
      hasTestData = true;
      for (const name of order) phases.push(await phase(name, round));
    } else {
      for (const name of order) phases.push(await phase(name, round));
      await wipe();
      hasTestData = false;
      phases.push(await phase('empty', round));
    }
  }
  if (hasTestData) await wipe();

  const NAMES: PhaseName[] = ['empty', 'idle', 'busy-test', 'busy-live'];
  const summary = Object.fromEntries(
    NAMES.map((name) => {
      const of = phases.filter((p) => p.phase === name);
      const neighbourPerS = of.flatMap((p) =>
        p.neighbour ? [p.neighbour.streams.reduce((s, x) => s + x.requestsPerSecond, 0)] : [],
      );
      return [
        name,
        {
          listPerS: r2(median(of.map((p) => p.list.requestsPerSecond))),
          listP99: r2(median(of.map((p) => p.list.p99))),
          putPerS: r2(median(of.map((p) => p.put.requestsPerSecond))),
          putP99: r2(median(of.map((p) => p.put.p99))),
          ...(of.every((p) => p.serviceCpuMsPerS !== undefined)
            ? { serviceCpuMsPerS: median(of.map((p) => p.serviceCpuMsPerS!)) }
            : {}),
          ...(neighbourPerS.length ? { neighbourPerS: r2(median(neighbourPerS)) } : {}),
        },
      ];
    }),
  ) as Record<PhaseName, { listPerS: number; listP99: number; putPerS: number; putP99: number }>;
  const ratio = (a: PhaseName, b: PhaseName) => ({
    listPerS: r3(summary[a].listPerS / summary[b].listPerS),
    listP99: r3(summary[a].listP99 / summary[b].listP99),
    putPerS: r3(summary[a].putPerS / summary[b].putPerS),
    putP99: r3(summary[a].putP99 / summary[b].putP99),
  });
  const ratios = {
    'busy-test÷idle': ratio('busy-test', 'idle'),
    'busy-live÷idle': ratio('busy-live', 'idle'),
    'busy-test÷busy-live': ratio('busy-test', 'busy-live'),
    'idle÷empty': ratio('idle', 'empty'),
  };
  const result = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    smoke,
    database: databaseUrl ? 'postgresql' : 'pglite',
    settings: {
      datasetListings: dataset.listings,
      testListings,
      connections,
      durationS,
      rounds,
      neighbourRatePerS: neighbourRate,
      neighbourReads,
      compact: values.compact,
      neighbourReferences: references,
    },
    fillSeconds: fills.map(r2),
    summary,
    ratios,
    phases,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (values.out) writeRecord(values.out, result);
  const table = [
    `| phase (median of ${rounds}) | list req/s | list p99 ms | PUT req/s | PUT p99 ms | neighbour req/s |`,
    '|---|---|---|---|---|---|',
    ...NAMES.map((name) => {
      const s = summary[name] as (typeof summary)[PhaseName] & { neighbourPerS?: number };
      return `| ${name} | ${s.listPerS} | ${s.listP99} | ${s.putPerS} | ${s.putP99} | ${s.neighbourPerS ?? ''} |`;
    }),
    '',
    '| ratio | list req/s | list p99 | PUT req/s | PUT p99 |',
    '|---|---|---|---|---|',
    ...Object.entries(ratios).map(
      ([k, v]) => `| ${k} | ${v.listPerS} | ${v.listP99} | ${v.putPerS} | ${v.putP99} |`,
    ),
  ];
  process.stderr.write(`${table.join('\n')}\n`);
  if (smoke) log('smoke: it runs; the figures are not a measurement');
} finally {
  await service.stop();
  await db?.end();
  if (pgliteCopy) rmSync(pgliteCopy, { recursive: true, force: true });
  if (ownDatabase) await sql('postgres', `DROP DATABASE IF EXISTS ${SMOKE_DB} WITH (FORCE)`);
}
