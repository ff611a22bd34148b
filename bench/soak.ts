/**
 * `npm run soak`: a fixed rate of mixed partner requests (reads, a sync loop, single and bulk
 * writes, status changes) against a real `forecourt serve` process on PostgreSQL, open loop: a slow
 * answer does not slow the sending down, as independent partners do not wait for each other.
 * Checked at the end: zero errors, list latency within the benchmark targets, memory flat.
 * Writes bench/results/soak-<date>.json and a plot of memory and latency (docs/images/soak-rss.png).
 *
 *   npm run soak                              10 minutes at 40 requests/s, 100k listings
 *   npm run soak -- --minutes 60 --rate 80
 *   npm run soak -- --smoke                   30 s on 10k listings, plot to test-results/ (CI)
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { postgresDataset, sql } from './lib/datasets.js';
import { latencySummary, percentile, slopePerMinute } from './lib/load.js';
import { startService } from './lib/processes.js';
import { writeRecord } from './lib/record.js';
import { type Dataset, listingBody } from './lib/scenarios.js';
import { renderPlot, type Series } from './lib/soak-plot.js';
import { rssMb } from './lib/usage.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '40' },
    listings: { type: 'string', default: '100000' },
    smoke: { type: 'boolean', default: false },
    png: { type: 'string' },
  },
});
const smoke = values.smoke!;
const minutes = smoke ? 0.5 : Number(values.minutes);
const rate = smoke ? 20 : Number(values.rate);
const listings = smoke ? 10_000 : Number(values.listings);
const ROOT = path.resolve(import.meta.dirname, '..');
const png = values.png ?? path.join(ROOT, smoke ? 'test-results/soak-rss.png' : 'docs/images/soak-rss.png');
const API = '/api/external/v1';
const log = (msg: string) => process.stderr.write(`[soak] ${msg}\n`);
if (!(minutes > 0) || !(rate > 0) || !(listings >= 10_000)) {
  throw new Error('--minutes and --rate must be positive, --listings at least 10000');
}

const database = smoke ? 'soak_smoke_10k' : `soak_${listings / 1000}k`;
const url = await postgresDataset(database, listings, true);
const dataset = JSON.parse(
  readFileSync(path.join(ROOT, 'bench/.data', `${database}.json`), 'utf8'),
) as Dataset & {
  wideSecret: string;
};
const service = await startService({ DATABASE_URL: url });
const adminToken = readFileSync(path.join(service.dataDir, 'admin-token'), 'utf8').trim();
// Enough connections that a slow moment queues requests at the service, not in this process.
const dispatcher = new Agent({ connect: { ca: service.ca, servername: 'localhost' }, connections: 32 });

// --- The mix: what a marketplace's partners do, in proportions (weights sum to 100).
const run = Date.now().toString(36);
const POOL = 2_000; // references written over and over: creates first, then updates
const known: string[] = []; // references the service has acknowledged
const ids: string[] = []; // listing ids seen in list answers
let cursor: string | undefined;
const random = (n: number) => Math.floor(Math.random() * n);
const ref = () => `SOAK-${run}-${random(POOL)}`;
const body = (reference: string) => ({
  ...listingBody(reference, random(1000)),
  price: 9_000 + random(20_000),
});

interface Call {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  path: string;
  secret: string;
  json?: unknown;
  /** Learns from the answer: references acknowledged, ids seen, the next cursor. */
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, read by the few fields each call learns from
  after?: (answer: any) => void;
}

const MIX: [string, number, () => Call][] = [
  [
    'list-restricted',
    20,
    () => ({ method: 'GET', path: '/listings?pageSize=50&status=active', secret: dataset.restrictedSecret }),
  ],
  [
    'list-global',
    10,
    () => ({
      method: 'GET',
      path: `/listings?pageSize=50&status=active&page=${1 + random(20)}`,
      secret: dataset.globalSecret,
      after: (a) => {
        for (const l of a.data.slice(0, 5)) if (ids.length < 5_000) ids.push(l.id);
      },
    }),
  ],
  [
    'sync',
    15,
    () => ({
      method: 'GET',
      path: `/listings?status=all&pageSize=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      secret: dataset.globalSecret,
      after: (a) => {
        cursor = a.pagination.nextCursor ?? cursor;
      },
    }),
  ],
  ['locations', 5, () => ({ method: 'GET', path: '/locations?withCounts=true', secret: dataset.wideSecret })],
  [
    'get-listing',
    10,
    () => ({
      method: 'GET',
      path: ids.length ? `/listings/${ids[random(ids.length)]}` : '/listings?pageSize=1',
      secret: dataset.globalSecret,
    }),
  ],
  [
    'put',
    25,
    () => {
      const reference = ref();
      return {
        method: 'PUT',
        path: `/listings/${reference}`,
        secret: dataset.globalSecret,
        json: body(reference),
        after: () => known.push(reference),
      };
    },
  ],
  [
    'bulk-20',
    8,
    () => {
      const items = Array.from({ length: 20 }, () => body(ref()));
      return {
        method: 'POST',
        path: '/listings/bulk-upsert',
        secret: dataset.globalSecret,
        json: items,
        after: (a) => {
          for (const r of a.data.results) known.push(r.externalReference);
        },
      };
    },
  ],
  [
    'status',
    5,
    () => {
      const reference = known.length ? known[random(known.length)]! : undefined;
      return reference
        ? {
            method: 'POST',
            path: `/listings/${reference}/status`,
            secret: dataset.globalSecret,
            json: { status: random(2) ? 'pending' : 'active' },
          }
        : { method: 'GET', path: '/listings?pageSize=1', secret: dataset.globalSecret };
    },
  ],
  [
    'mark-sold',
    2,
    () => {
      const reference = known.length ? known[random(known.length)]! : undefined;
      return reference
        ? { method: 'DELETE', path: `/listings/${reference}`, secret: dataset.globalSecret }
        : { method: 'GET', path: '/listings?pageSize=1', secret: dataset.globalSecret };
    },
  ],
];
const WHEEL = MIX.flatMap(([name, weight, make]) => Array.from({ length: weight }, () => ({ name, make })));

// --- Measurements.
const latencies = new Map<string, number[]>(MIX.map(([name]) => [name, []]));
const errorSamples: string[] = [];
let errors = 0;
let sent = 0;
const seconds: { t: number; rssMb: number; heapMb?: number; done: number; p99?: number }[] = [];
let windowLatencies: number[] = [];
let windowDone = 0;

async function fire(kind: string, call: Call): Promise<void> {
  const started = performance.now();
  try {
    const answer = await request(`${service.url}${API}${call.path}`, {
      method: call.method,
      dispatcher,
      headers: {
        authorization: `Bearer ${call.secret}`,
        ...(call.json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(call.json === undefined ? {} : { body: JSON.stringify(call.json) }),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const text = await answer.body.text();
    const ms = performance.now() - started;
    if (answer.statusCode < 200 || answer.statusCode >= 300) {
      errors++;
      if (errorSamples.length < 10)
        errorSamples.push(`${kind} ${call.method} ${call.path} → ${answer.statusCode} ${text.slice(0, 200)}`);
      return;
    }
    latencies.get(kind)!.push(ms);
    windowLatencies.push(ms);
    windowDone++;
    call.after?.(JSON.parse(text));
  } catch (error) {
    errors++;
    if (errorSamples.length < 10)
      errorSamples.push(`${kind} ${call.method} ${call.path} → ${(error as Error).message}`);
  }
}

let serviceExited = false;
const crashLog = path.join(ROOT, 'test-results/soak-service.log');

async function heapMb(): Promise<number | undefined> {
  try {
    const answer = await request(`${service.url}/api/admin/v1/metrics`, {
      dispatcher,
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const text = await answer.body.text();
    const match = /^forecourt_nodejs_heap_size_used_bytes\s+([\d.e+]+)/m.exec(text);
    return match ? Number(match[1]) / 2 ** 20 : undefined;
  } catch {
    return undefined;
  }
}

// --- The run.
log(
  `${minutes} min at ${rate} requests/s against ${listings} listings (${database}); service pid ${service.pid}`,
);
const durationMs = minutes * 60_000;
const start = performance.now();
const inflight = new Set<Promise<void>>();
const sampler = setInterval(async () => {
  const t = (performance.now() - start) / 1000;
  const rss = rssMb(service.pid);
  if (rss === undefined) {
    // A crashed service ends the run: its log (kept) says why.
    if (!serviceExited) log(`the service process exited after ${Math.round(t)} s; its log: ${crashLog}`);
    serviceExited = true;
    return;
  }
  const sorted = windowLatencies.sort((a, b) => a - b);
  const second = {
    t: Math.round(t),
    rssMb: Math.round(rss * 10) / 10,
    done: windowDone,
    ...(sorted.length ? { p99: Math.round(percentile(sorted, 0.99) * 10) / 10 } : {}),
  };
  windowLatencies = [];
  windowDone = 0;
  seconds.push(second);
  if (second.t % 5 === 0) {
    const heap = await heapMb();
    if (heap !== undefined) (second as { heapMb?: number }).heapMb = Math.round(heap * 10) / 10;
  }
  if (second.t % 60 === 0) log(`${second.t} s: ${sent} sent, ${errors} errors, RSS ${second.rssMb} MB`);
}, 1000);

const interval = 1000 / rate;
let next = start;
while (performance.now() - start < durationMs && !serviceExited) {
  const { name, make } = WHEEL[random(WHEEL.length)]!;
  const promise = fire(name, make());
  inflight.add(promise);
  void promise.finally(() => inflight.delete(promise));
  sent++;
  next += interval;
  const wait = next - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
await Promise.allSettled([...inflight]);
clearInterval(sampler);
const elapsedS = (performance.now() - start) / 1000;
if (serviceExited) {
  mkdirSync(path.dirname(crashLog), { recursive: true });
  copyFileSync(service.log, crashLog);
}
await service.stop();
await dispatcher.close();
await sql('postgres', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);

// --- Verdicts.
const perKind = latencySummary(latencies);
// The first fifth warms up (JIT, caches, pools); memory is judged on the rest.
const warm = seconds.filter((s) => s.t > elapsedS / 5);
const rssSlope = slopePerMinute(warm.map((s) => ({ t: s.t, y: s.rssMb })));
const heapPoints = warm.filter((s) => s.heapMb !== undefined).map((s) => ({ t: s.t, y: s.heapMb! }));
const heapSlope = slopePerMinute(heapPoints);
const meanRss = warm.reduce((s, p) => s + p.rssMb, 0) / Math.max(1, warm.length);
const judgedMinutes = (warm.at(-1)?.t ?? 0) / 60 - (warm[0]?.t ?? 0) / 60;
const rssGrowth = rssSlope * judgedMinutes;
const listP99 = Math.max(...['list-restricted', 'list-global', 'sync'].map((k) => perKind[k]!.p99 ?? 0));
const checks = [
  {
    check: 'service ran to the end',
    measured: serviceExited ? 'no' : 'yes',
    target: 'yes',
    met: !serviceExited,
    inSmoke: true,
  },
  { check: 'errors', measured: errors, target: '= 0', met: errors === 0, inSmoke: true },
  { check: 'list p99 (ms)', measured: listP99, target: '< 25', met: listP99 < 25 },
  {
    check: 'locations with counts p95 (ms)',
    measured: perKind.locations!.p95,
    target: '< 50',
    met: (perKind.locations!.p95 ?? 0) < 50,
  },
  {
    // Flat: the trend over the judged part adds less than 5% of the mean RSS.
    check: 'RSS trend over the run after warm-up (MB)',
    measured: Math.round(rssGrowth * 10) / 10,
    target: `< ${Math.round(meanRss * 0.05 * 10) / 10} (5% of the mean)`,
    met: rssGrowth < meanRss * 0.05,
  },
];

/**
 * The smoke run (CI) proves the soak runs and nothing fails; 30 s on a busy machine judges no
 * latency or trend, so those checks are shown there, not judged.
 */
function judgedNow(c: { inSmoke?: boolean }): boolean {
  return !smoke || c.inSmoke === true;
}

const result = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  },
  node: process.version,
  postgres: (await sql('postgres', 'SHOW server_version')).rows[0].server_version as string,
  config: { minutes, rate, listings, mix: Object.fromEntries(MIX.map(([n, w]) => [n, w])) },
  sent,
  elapsedS: Math.round(elapsedS),
  achievedRate: Math.round((sent / elapsedS) * 10) / 10,
  errors,
  errorSamples,
  perKind,
  memory: {
    rssStartMb: seconds[0]?.rssMb,
    rssEndMb: seconds.at(-1)?.rssMb,
    rssMaxMb: Math.max(...seconds.map((s) => s.rssMb)),
    rssSlopeMbPerMin: Math.round(rssSlope * 100) / 100,
    heapSlopeMbPerMin: Math.round(heapSlope * 100) / 100,
  },
  checks,
  seconds,
};
const resultsDir = path.join(ROOT, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
const file = path.join(resultsDir, `soak-${smoke ? 'smoke-' : ''}${result.date.slice(0, 10)}.json`);
writeRecord(file, result);

const series: Series = {
  t: seconds.map((s) => s.t),
  rssMb: seconds.map((s) => s.rssMb),
  heapMb: seconds.map((s) => s.heapMb ?? null),
  p99: seconds.map((s) => s.p99 ?? null),
  done: seconds.map((s) => s.done),
};
const title = `forecourt serve on PostgreSQL, ${listings.toLocaleString('en')} listings, ${rate} requests/s mixed, ${minutes} min (${result.date.slice(0, 10)})`;
const plotted = await renderPlot(series, title, png);
log(plotted ? `plot: ${path.relative(ROOT, png)}` : 'no Chromium: the plot was not rendered');

process.stdout.write(
  [
    `sent ${sent} in ${Math.round(elapsedS)} s (${result.achievedRate}/s), ${errors} errors`,
    ...Object.entries(perKind).map(
      ([k, v]) =>
        `  ${k.padEnd(16)} ${String(v.requests).padStart(6)}  p50 ${v.p50}  p95 ${v.p95}  p99 ${v.p99} ms`,
    ),
    `  RSS ${result.memory.rssStartMb} → ${result.memory.rssEndMb} MB (max ${result.memory.rssMaxMb}), trend ${result.memory.rssSlopeMbPerMin} MB/min after warm-up; heap trend ${result.memory.heapSlopeMbPerMin} MB/min`,
    ...checks.map((c) => {
      const judged = judgedNow(c);
      return `  ${c.met ? 'ok  ' : judged ? 'FAIL' : 'miss'} ${c.check}: ${c.measured} (target ${c.target})${judged ? '' : ', not judged in a smoke run'}`;
    }),
    `results: ${path.relative(ROOT, file)}`,
    ...errorSamples.map((e) => `  error: ${e}`),
    '',
  ].join('\n'),
);
process.exitCode = checks.every((c) => c.met || !judgedNow(c)) ? 0 : 1;
