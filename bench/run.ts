/**
 * One benchmark run against one loaded database (bench/dataset.ts): every scenario from a
 * separate load-generator process (this one; the service runs in its own), with its limits
 * measured in the same run:
 *   - database limit: the very statements the service sends for one request (recorded), replayed
 *     on the bare pg driver at the same concurrency;
 *   - HTTP limit: the same response bytes, pre-serialized, from a bare Fastify over the same TLS;
 *   - write limit: the store's multi-row upsert on the driver, without HTTP or validation.
 *
 *   node --import tsx bench/run.ts --database-url postgres://…/bench_1m [--data-dir DIR for PGlite]
 *     [--dataset bench/.data/bench_1m.json] [--connections 8] [--duration 10] [--only a,b] [--out file.json]
 *     [--pooler-url postgres://...@pgbouncer/db --pool-mode transaction|session] [--service-only]
 * Prints the result as JSON (and appends it to --out). bench/all.ts runs the whole matrix.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { compose } from '../src/compose.js';
import { parseConfig } from '../src/config.js';
import { dealerStore } from '../src/store/dealers.js';
import { listingWriteStore } from '../src/store/listings/writes.js';
import { openDb } from '../src/store/open.js';
import { ensureCursorKey } from '../src/store/service-info.js';
import { recording, replay } from './lib/db-limit.js';
import { load, summarize } from './lib/load.js';
import { peerInsert, peerListingFields, peerListPath, startPeer } from './lib/peer.js';
import { startHttpLimitServer, startService } from './lib/processes.js';
import type { Scenario } from './lib/report.js';
import {
  type Dataset,
  listingBody,
  putBody,
  READS,
  type ReadScenario,
  requestWork,
  rowFactory,
  secretOf,
} from './lib/scenarios.js';
import { measuredOn, rssMb } from './lib/usage.js';
import { writeToVisible } from './lib/write-visible.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'data-dir': { type: 'string' },
    dataset: { type: 'string' },
    connections: { type: 'string', default: '8' },
    duration: { type: 'string', default: '10' },
    // Each scenario is first run unmeasured for this long: a service just started (its caches,
    // its prepared statements, the embedded database's first writes to each page) served a
    // first 10 s of new PUTs on PGlite 0.7 times as fast as the next (2026-11-29).
    warmup: { type: 'string', default: '3' },
    only: { type: 'string' },
    out: { type: 'string' },
    label: { type: 'string' },
    // Also measure the peer, Platformatic DB, on list-global's page (PostgreSQL only).
    peer: { type: 'boolean', default: false },
    // The service connects through this pooler (its DATABASE_URL) in --pool-mode; --database-url
    // stays the direct way (DATABASE_DIRECT_URL, and the database limit's replay).
    'pooler-url': { type: 'string' },
    'pool-mode': { type: 'string', default: 'transaction' },
    // The service's side only, no limits (comparing ways of connecting: the limits do not change).
    'service-only': { type: 'boolean', default: false },
    // Reads ask for a compressed answer (e.g. gzip, br): its cost to the service, against a run
    // without (docs/api.md, "Compression"). Each page's bytes on the wire are reported.
    'accept-encoding': { type: 'string' },
    // The image checker runs: off unless asked, as in bench/write-compare.ts. The datasets' image
    // URLs resolve nowhere, and its checks of millions of them (and the rewrites of the listings
    // using each) would run behind every scenario. Its own cost: npm run bench:images.
    'image-checks': { type: 'boolean', default: false },
    // Serves another checkout's build (its bin/forecourt.js and dist/) instead of this one's: the
    // same scenarios, limits and data against an older commit, alternated by hand.
    root: { type: 'string' },
  },
});
const databaseUrl = values['database-url'];
if (!databaseUrl && !values['data-dir']) throw new Error('--database-url or --data-dir is required');
const datasetFile =
  values.dataset ??
  path.resolve(
    import.meta.dirname,
    '.data',
    `${databaseUrl ? new URL(databaseUrl).pathname.slice(1) : 'embedded'}.json`,
  );
const dataset = JSON.parse(readFileSync(datasetFile, 'utf8')) as Dataset;
const connections = Number(values.connections);
const durationS = Number(values.duration);
const only = values.only?.split(',');
const serviceOnly = values['service-only'];
const wanted = (name: string) => !only || only.includes(name);
const log = (msg: string) => process.stderr.write(`[bench ${values.label ?? ''}] ${msg}\n`);
const API = '/api/external/v1';

const poolerUrl = values['pooler-url'];
// PGlite: the service runs on a fresh copy of the directory, removed at the end. Writes (put-single,
// bulk) would otherwise stay in the dataset and leave it larger and slower for every later run
// (put-single 250 then 128 req/s two runs apart, 2026-11-29).
const pgliteCopy = databaseUrl
  ? undefined
  : path.join(mkdtempSync(path.join(os.tmpdir(), 'forecourt-bench-pglite-')), 'data');
if (pgliteCopy) {
  // Removed however the run ends (a failed scenario throws): a copy is over a gigabyte at 100k.
  process.once('exit', () => rmSync(path.dirname(pgliteCopy), { recursive: true, force: true }));
  cpSync(path.resolve(values['data-dir']!), pgliteCopy, { recursive: true });
}
const service = await startService(
  {
    ...(databaseUrl
      ? poolerUrl
        ? {
            DATABASE_URL: poolerUrl,
            DATABASE_DIRECT_URL: databaseUrl,
            DATABASE_POOL_MODE: values['pool-mode']!,
          }
        : { DATABASE_URL: databaseUrl }
      : { DATA_DIR: pgliteCopy! }),
    ...(values['image-checks'] ? {} : { IMAGE_CHECK_CONCURRENCY: '0' }),
  },
  values.root ? { root: path.resolve(values.root) } : {},
);
// Idle: started, migrated, nothing asked yet (the timers of background work have run once).
await new Promise((resolve) => setTimeout(resolve, 3000));
const idleRssMb = rssMb(service.pid);
log(`idle RSS ${idleRssMb} MB`);
/** The service's own load run, with the CPU it spent per request and its memory after. */
const warmupS = Number(values.warmup);
async function serviceLoad(options: Parameters<typeof load>[0]) {
  // Not in a smoke run (a second a scenario): it proves each scenario runs, nothing more.
  if (warmupS > 0 && durationS > 1) await load({ ...options, durationS: warmupS });
  const { result, cpuMs, rssMb } = await measuredOn(service.pid, () => load(options));
  const perRequest = cpuMs !== undefined && result.requests > 0 ? cpuMs / result.requests : undefined;
  return {
    measured: result,
    usage: {
      ...(perRequest !== undefined ? { serviceCpuMs: Math.round(perRequest * 100) / 100 } : {}),
      ...(rssMb !== undefined ? { rssMb } : {}),
    },
  };
}
const auth = (who: Parameters<typeof secretOf>[1]) => ({ authorization: `Bearer ${secretOf(dataset, who)}` });
const acceptEncoding = values['accept-encoding'];
const encoding: Record<string, string> = acceptEncoding ? { 'accept-encoding': acceptEncoding } : {};

/** A page's bytes as they travel, compressed as --accept-encoding asks (undici's request does not decode). */
async function wireBytes(pathAndQuery: string, who: Parameters<typeof secretOf>[1]) {
  const res = await request(`${service.url}${API}${pathAndQuery}`, {
    dispatcher: service.dispatcher,
    headers: { ...auth(who), ...encoding },
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { encoding: String(res.headers['content-encoding'] ?? 'identity'), bytes: body.length };
}

async function get(pathAndQuery: string, who: Parameters<typeof secretOf>[1]) {
  const res = await request(`${service.url}${API}${pathAndQuery}`, {
    dispatcher: service.dispatcher,
    headers: auth(who),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${pathAndQuery}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text;
}

// The DB-limit side needs the service's own statements: use cases over a recording Db, in this
// process, on the same database (PostgreSQL only: PGlite is single-process).
const config = parseConfig({ DATA_DIR: os.tmpdir(), ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
const recorder = databaseUrl
  ? recording(
      await openDb({
        databaseUrl,
        dataDir: os.tmpdir(),
        statementTimeoutMs: 60_000,
        connectTimeoutMs: 5000,
        poolSize: 4,
      }),
    )
  : undefined;
const useCases = recorder
  ? compose(config, recorder.db, { cursorKey: await ensureCursorKey(recorder.db), publicOrigin: service.url })
  : undefined;
// Nothing changes partners during a run: the access cache may keep, as the service's does.
useCases?.accessCache.setLive(true);

const results: Scenario[] = [];
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

// --- Reads.
const reads: ReadScenario[] = READS.filter((s) => wanted(s.name)).map((s) => ({ ...s }));
const cursorScenario = reads.find((s) => s.name === 'list-global-cursor-400');
if (cursorScenario) {
  let cursor: string | undefined;
  for (let page = 1; page < 400; page++) {
    const body = JSON.parse(
      await get(
        `/listings?pageSize=50&status=active${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        'global',
      ),
    );
    cursor = body.pagination.nextCursor;
  }
  cursorScenario.path = `/listings?pageSize=50&status=active&cursor=${encodeURIComponent(cursor!)}`;
}
const bodies: Record<string, string> = {};
for (const s of reads) bodies[`${API}${s.path}`] = await get(s.path, s.who);
const bodiesFile = path.join(service.dataDir, 'bench-bodies.json');
writeFileSync(bodiesFile, JSON.stringify(bodies));
const httpLimit = await startHttpLimitServer(bodiesFile, path.join(service.dataDir, 'tls'));

for (const s of reads) {
  log(`${s.name}: service`);
  const { measured, usage } = await serviceLoad({
    url: `${service.url}${API}${s.path}`,
    connections,
    durationS,
    headers: { ...auth(s.who), ...encoding },
  });
  const result: Scenario = { name: s.name, connections, service: measured, ...usage };
  result.wireBytes = await wireBytes(s.path, s.who);
  if (!serviceOnly) {
    log(`${s.name}: HTTP limit`);
    result.httpLimit = await load({ url: `${httpLimit.url}${API}${s.path}`, connections, durationS });
    result.ratioToHttpLimit = ratio(measured.requestsPerSecond, result.httpLimit.requestsPerSecond);
  }
  if (useCases && recorder && databaseUrl && !serviceOnly) {
    // The second of two requests: what the service sends once the partner's access is kept.
    await requestWork(useCases, secretOf(dataset, s.who), s.path);
    recorder.take();
    await requestWork(useCases, secretOf(dataset, s.who), s.path);
    const statements = recorder.take();
    log(`${s.name}: DB limit (${statements.length} statements)`);
    result.dbLimit = await replay(databaseUrl, statements, connections, durationS);
    result.ratioToDbLimit = ratio(measured.requestsPerSecond, result.dbLimit.requestsPerSecond);
    result.statements = statements.map((st) => st.name);
  }
  results.push(result);
}
await httpLimit.stop();

const listGlobal = results.find((s) => s.name === 'list-global');
if (values.peer) {
  if (!databaseUrl || !listGlobal)
    throw new Error('--peer needs --database-url and the list-global scenario');
  log('list-global: the peer, Platformatic DB');
  const peer = await startPeer(databaseUrl, path.join(service.dataDir, 'tls'));
  const fields = await peerListingFields(databaseUrl);
  try {
    // A ratio only means something if both serve the same page: the same listings in the same
    // order, the same total.
    const oursText = await get('/listings?pageSize=50&status=active', 'global');
    const ours = JSON.parse(oursText);
    const res = await request(`${peer.url}${peerListPath(true, fields)}`, { dispatcher: peer.dispatcher });
    const theirsText = await res.body.text();
    const theirs = JSON.parse(theirsText) as { id: string }[];
    const same =
      res.statusCode === 200 &&
      JSON.stringify(theirs.map((l) => l.id)) ===
        JSON.stringify(ours.data.map((l: { id: string }) => l.id)) &&
      Number(res.headers['x-total-count']) === ours.pagination.totalItems;
    if (!same) throw new Error(`the peer does not serve list-global's page (status ${res.statusCode})`);
    // Where the bytes of the same page go, key by key (each `"key":value` as JSON.stringify
    // writes it, which is how both answers are written: compact).
    const byKey = (items: Record<string, unknown>[]) => {
      const sums: Record<string, number> = {};
      for (const item of items)
        for (const [key, value] of Object.entries(item))
          sums[key] =
            (sums[key] ?? 0) + Buffer.byteLength(`${JSON.stringify(key)}:${JSON.stringify(value)},`);
      return Object.fromEntries(Object.entries(sums).sort((a, b) => b[1] - a[1]));
    };
    listGlobal.pageBytes = {
      ours: Buffer.byteLength(oursText),
      peer: Buffer.byteLength(theirsText),
      oursByKey: byKey(ours.data),
      peerByKey: byKey(theirs as unknown as Record<string, unknown>[]),
    };
    const page = async (withTotals: boolean) => {
      const measured = await load({
        url: `${peer.url}${peerListPath(withTotals, fields)}`,
        connections,
        durationS,
      });
      if (measured.errors > 0) throw new Error(`the peer answered ${measured.errors} requests with errors`);
      return measured;
    };
    const withTotals = await page(true);
    const withoutTotals = await page(false);
    listGlobal.peer = { withTotals, withoutTotals };
    listGlobal.ratioToPeer = ratio(listGlobal.service.requestsPerSecond, withoutTotals.requestsPerSecond);
  } finally {
    await peer.stop();
  }
}

// Following cursors to the end, one page after another, as a partner's first full sync does.
if (wanted('cursor-to-end')) {
  log('cursor-to-end');
  const times: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  const started = performance.now();
  for (;;) {
    const t = performance.now();
    const body = JSON.parse(
      await get(
        `/listings?pageSize=50&status=all${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        'restricted',
      ),
    );
    times.push(performance.now() - t);
    pages++;
    cursor = body.pagination.nextCursor;
    if (!body.pagination.hasMore) break;
  }
  const n = Math.min(50, Math.floor(times.length / 4));
  const first = summarize(times.slice(1, n + 1), 1, 0);
  const last = summarize(times.slice(-n), 1, 0);
  results.push({
    name: 'cursor-to-end',
    connections: 1,
    service: summarize(times, (performance.now() - started) / 1000, 0),
    statements: [
      `${pages} pages; first ${n} p50 ${first.p50} ms, last ${n} p50 ${last.p50} ms (ratio ${ratio(last.p50, first.p50)})`,
    ],
  });
}

// --- Writes.
const run = Date.now().toString(36);

// A write acknowledged → passed by a sync cursor, quiet and under a write held open for 3 s.
const visibleHttp = {
  get: async (p: string) => JSON.parse(await get(p, 'global')),
  // A 503 applied nothing and says "retry shortly": a client retries it, backing off (the smoke
  // run in CI shares the cores with test passes). The time measured starts at the acknowledgement.
  async put(p: string, body: unknown) {
    for (let attempt = 1; ; attempt++) {
      const res = await request(`${service.url}${API}${p}`, {
        method: 'PUT',
        dispatcher: service.dispatcher,
        headers: { ...auth('global'), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.body.text();
      if (res.statusCode === 503 && attempt < 6) {
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
        continue;
      }
      if (res.statusCode >= 300) throw new Error(`PUT ${p}: ${res.statusCode} ${text.slice(0, 300)}`);
      return;
    }
  },
};
const smoke = durationS <= 1;
for (const [name, hold] of [
  ['write-visible', undefined],
  ['write-visible-held-3s', databaseUrl ? { databaseUrl, ms: 3000 } : undefined],
] as const) {
  if (!wanted(name) || (name !== 'write-visible' && !hold)) continue;
  log(name);
  const measured = await writeToVisible(visibleHttp, {
    samples: hold ? (smoke ? 3 : 20) : smoke ? 10 : 200,
    body: (reference) => listingBody(reference, 1),
    run: `${run}-${name}`,
    ...(hold ? { hold } : {}),
  });
  if (measured.skipped > 0) throw new Error(`${name}: the cursor walk skipped ${measured.skipped} changes`);
  results.push({
    name,
    connections: 1,
    service: measured,
    statements: [
      `${measured.requests} writes; write acknowledged → passed by the cursor; skipped ${measured.skipped}`,
    ],
  });
}

if (wanted('put-single')) {
  log('put-single');
  let n = 0;
  const { measured, usage } = await serviceLoad({
    url: `${service.url}${API}/listings/x`,
    connections,
    durationS,
    method: 'PUT',
    headers: { ...auth('global'), 'content-type': 'application/json' },
    body: JSON.stringify(putBody('ignored', 1)),
    path: () => `${API}/listings/BENCH-PUT-${run}-${n++}`,
  });
  results.push({
    name: 'put-single',
    connections,
    service: measured,
    listingsPerSecond: measured.requestsPerSecond,
    ...usage,
  });
}
if (wanted('bulk-upsert-100')) {
  log('bulk-upsert-100');
  const items = Array.from({ length: 100 }, (_, i) => listingBody(`BENCH-BULK-${run}-[<id>]-${i}`, i));
  const { measured, usage } = await serviceLoad({
    url: `${service.url}${API}/listings/bulk-upsert`,
    connections,
    durationS,
    method: 'POST',
    headers: { ...auth('global'), 'content-type': 'application/json' },
    body: JSON.stringify(items),
    idReplacement: true,
  });
  const result: Scenario = {
    name: 'bulk-upsert-100',
    connections,
    service: measured,
    listingsPerSecond: Math.round(measured.requestsPerSecond * 100),
    ...usage,
  };
  if (recorder && !serviceOnly) {
    log('bulk-upsert-100: raw multi-row upsert on the driver');
    const store = listingWriteStore(recorder.db);
    const [dealer] = await dealerStore(recorder.db)
      .idsByCodes(['G001-L001'])
      .then((m) => [...m.values()]);
    const rows = rowFactory(dealer!);
    const latencies: number[] = [];
    let batch = 0;
    const until = performance.now() + durationS * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          const fresh = rows(batch++, 100, run);
          const t = performance.now();
          // What a bulk request of new listings costs the database: look, insert (with its history).
          await recorder.db.transaction(
            async (tx) => {
              await store.lockExisting(
                { partnerId: dataset.writerId, test: false },
                fresh.map((r) => r.reference),
                tx,
              );
              await store.insertNew({ partnerId: dataset.writerId, test: false }, fresh, tx);
              // As the service's writes run (domain/listings/writes).
            },
            { genericPlans: true },
          );
          latencies.push(performance.now() - t);
        }
      }),
    );
    const raw = summarize(latencies, (performance.now() - started) / 1000, 0);
    result.dbLimit = raw;
    result.rawListingsPerSecond = Math.round(raw.requestsPerSecond * 100);
    result.ratioToRawUpsert = ratio(result.listingsPerSecond!, result.rawListingsPerSecond);
  }
  results.push(result);
}

// The peer's single insert beside put-single (bench/lib/peer.ts says what it does and skips).
const putSingle = results.find((s) => s.name === 'put-single');
if (values.peer && putSingle && databaseUrl) {
  log('put-single: the peer, Platformatic DB');
  putSingle.peerInsert = await peerInsert(
    databaseUrl,
    path.join(service.dataDir, 'tls'),
    (options) =>
      load({
        ...options,
        connections,
        durationS,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      }),
    (reference) => listingBody(reference, 1),
  );
  putSingle.ratioToPeerInsert = ratio(
    putSingle.service.requestsPerSecond,
    putSingle.peerInsert.requestsPerSecond,
  );
}

await service.stop();
await recorder?.db.close();
const output = {
  label: values.label ?? null,
  database: databaseUrl ? 'postgres' : 'pglite',
  listings: dataset.listings,
  connections,
  durationS,
  ...(idleRssMb !== undefined ? { idleRssMb } : {}),
  scenarios: results,
};
process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
if (values.out) writeFileSync(values.out, `${JSON.stringify(output)}\n`, { flag: 'a' });
