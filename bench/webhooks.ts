/**
 * The webhook benchmark (issue 19), against `forecourt serve` as its own process on PostgreSQL:
 *   - delivery latency: a write acknowledged (the PUT's answer arrived) → the listing arrived at
 *     the receiver, with 1 endpoint and with 100 (5 partners × 20), writes spaced out on a quiet
 *     service. Goal: p99 under 2 s.
 *   - write throughput with 100 endpoints delivering against none (the same endpoints paused),
 *     alternated A/B/A/B on the same database so drift cancels out. Goal: ≥ 0.95.
 * The receiver is one local HTTP server (WEBHOOK_ALLOW_PRIVATE, as for tests), answering 200 at
 * once; it runs in this process, so it shares the machine's cores with the service, as a real
 * receiver would not.
 *
 *   node --import tsx bench/webhooks.ts --database-url postgres://…/db --dataset bench/.data/db.json
 *     [--connections 2] [--duration 10] [--samples 40] [--smoke]
 * Prints the result as JSON on stdout (bench/all.ts runs it).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CLAIM_SQL } from '../src/store/webhooks/index.js';
import { API, serviceApi } from './lib/api.js';
import { load, percentile } from './lib/load.js';
import { startService } from './lib/processes.js';
import { type Dataset, listingBody, putBody } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    dataset: { type: 'string' },
    connections: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    samples: { type: 'string', default: '40' },
    smoke: { type: 'boolean', default: false },
  },
});
const log = (msg: string) => process.stderr.write(`[bench webhooks] ${msg}\n`);
const databaseUrl = values['database-url'];
if (!databaseUrl || !values.dataset) throw new Error('--database-url and --dataset are required');
const dataset = JSON.parse(readFileSync(values.dataset, 'utf8')) as Dataset;
const smoke = values.smoke;
const connections = Number(values.connections);
const durationS = smoke ? 1 : Number(values.duration);
const samples = smoke ? 5 : Number(values.samples);
const ENDPOINTS = smoke ? 10 : 100;
const PARTNERS = Math.ceil(ENDPOINTS / 20);
/** Between latency samples: a quiet service, each write on its own (longer than the delivery spacing). */
const SPACE_MS = 1_500;

// The receiver: each endpoint is a path; `seen` holds when each listing version arrived there.
const seen = new Map<string, number>();
let parse = true;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    if (parse) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data: { id: string; updatedAt: string }[];
      };
      for (const l of body.data) {
        const key = `${req.url}|${l.id}|${l.updatedAt}`;
        if (!seen.has(key)) seen.set(key, at);
      }
    }
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const adminToken = randomBytes(24).toString('base64url');
const service = await startService({
  DATABASE_URL: databaseUrl,
  ADMIN_TOKEN: adminToken,
  WEBHOOK_ALLOW_PRIVATE: 'true',
});

const { ok, createPartner } = serviceApi(service, adminToken);

const partners: string[] = [];
for (let p = 0; p < PARTNERS; p++) {
  const created = await createPartner({
    name: `bench-webhooks-${Date.now()}-${p}`,
    scopes: ['read:listings', 'manage:webhooks'],
  });
  partners.push(created.secret);
}
const endpoints: { id: string; secret: string; path: string }[] = [];
async function addEndpoint(): Promise<void> {
  const n = endpoints.length;
  const secret = partners[Math.floor(n / 20)]!;
  const path = `/e/${n}`;
  const created = await ok('POST', `${API}/webhooks`, secret, { url: `${receiverUrl}${path}` });
  endpoints.push({ id: created.id, secret, path });
}
const setEnabled = (enabled: boolean) =>
  Promise.all(endpoints.map((e) => ok('PATCH', `${API}/webhooks/${e.id}`, e.secret, { enabled })));

const writer = dataset.globalSecret;
const run = randomBytes(3).toString('hex');

/** Ack → arrival at every endpoint, for writes spaced apart (a quiet service). */
async function latency(label: string): Promise<{ p50: number; p99: number; max: number; samples: number }> {
  parse = true;
  const waits: number[] = [];
  for (let i = 0; i < samples; i++) {
    const reference = `BENCH-WH-${run}-${label.replace(/ /g, '-')}-${i}`;
    const written = await ok('PUT', `${API}/listings/${reference}`, writer, listingBody(reference, i));
    const acked = performance.now();
    const listing = await ok('GET', `${API}/listings/${written.listingId}`, writer);
    const deadline = Date.now() + 30_000;
    for (const e of endpoints) {
      const key = `${e.path}|${listing.id}|${listing.updatedAt}`;
      while (!seen.has(key)) {
        if (Date.now() > deadline) throw new Error(`${label}: not delivered to ${e.path} within 30 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
      waits.push(seen.get(key)! - acked);
    }
    await new Promise((r) => setTimeout(r, SPACE_MS));
  }
  if (process.env.BENCH_VERBOSE) log(`${label}: ${waits.map(Math.round).join(' ')}`);
  waits.sort((a, b) => a - b);
  const round = (v: number) => Math.round(v);
  const result = {
    p50: round(percentile(waits, 0.5)),
    p99: round(percentile(waits, 0.99)),
    max: round(waits.at(-1)!),
    samples: waits.length,
  };
  log(`${label}: ack → delivered p50 ${result.p50} ms, p99 ${result.p99} ms (${waits.length} deliveries)`);
  return result;
}

/**
 * Each throughput run starts from the same state: vacuumed, analyzed, checkpointed. Otherwise an
 * autovacuum or a checkpoint triggered by the previous run's writes lands in some runs and not in
 * others, which moved single runs by ±25 %.
 */
async function settle(): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('VACUUM (ANALYZE) listings, webhook_endpoints, webhook_attempts');
    await db.query('CHECKPOINT');
  } finally {
    await db.end();
  }
}

/** PUT throughput, fresh references, from autocannon in this process. */
async function throughput(label: string): Promise<number> {
  await settle();
  parse = false;
  let n = 0;
  const measured = await load({
    url: `${service.url}${API}/listings/x`,
    connections,
    durationS,
    method: 'PUT',
    headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
    body: JSON.stringify(putBody('ignored', 1)),
    path: () => `${API}/listings/BENCH-WH-T-${run}-${label}-${n++}`,
  });
  if (measured.errors) throw new Error(`${label}: ${measured.errors} errors`);
  log(`${label}: ${measured.requestsPerSecond} writes/s`);
  return measured.requestsPerSecond;
}

/** Waits until every enabled endpoint has caught up: no listing after its position, nothing pending. */
async function drained(): Promise<number> {
  const started = performance.now();
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    for (;;) {
      const { rows } = await db.query(
        `SELECT count(*)::int AS behind FROM webhook_endpoints e WHERE e.enabled AND (e.pending_delivery_id IS NOT NULL
           OR (SELECT true FROM listings l WHERE (l.updated_at, l.id) > (e.position_ts, e.position_id)
               ORDER BY l.updated_at, l.id LIMIT 1))`,
      );
      if (rows[0].behind === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await db.end();
  }
  const took = Math.round(performance.now() - started);
  await new Promise((r) => setTimeout(r, 1000)); // the last acknowledgements settle
  return took;
}

/** The claim must probe listings through the (updated_at, id) index, never by a scan per endpoint. */
async function checkClaimPlan(): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(`EXPLAIN ${CLAIM_SQL}`, ['bench-explain', 1, 16]);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    if (/Seq Scan on listings/.test(plan)) throw new Error(`the claim scans listings:\n${plan}`);
  } finally {
    await db.end();
  }
}

try {
  await addEndpoint();
  await checkClaimPlan();
  const one = await latency('1 endpoint');
  while (endpoints.length < ENDPOINTS) await addEndpoint();
  const hundred = await latency(`${ENDPOINTS} endpoints`);

  // Warm-up (discarded), then A B B A: none delivering (paused), all delivering. The database
  // grows as the runs write, so each side gets one early and one late run.
  await setEnabled(false);
  await throughput('warm-up');
  const none: number[] = [];
  const all: number[] = [];
  const catchUp: number[] = [];
  for (const side of ['none', 'all', 'all', 'none'] as const) {
    if (side === 'none') {
      await setEnabled(false);
      none.push(await throughput(`none-${none.length}`));
    } else {
      await setEnabled(true);
      await drained(); // the paused endpoints first catch up on the writes made while paused
      all.push(await throughput(`${ENDPOINTS}-${all.length}`));
      catchUp.push(await drained());
    }
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const ratio = Math.round((sum(all) / sum(none)) * 1000) / 1000;
  log(`throughput with ${ENDPOINTS} endpoints / none: ${ratio}`);
  process.stdout.write(
    `${JSON.stringify({
      endpoints: ENDPOINTS,
      latency: { one, many: hundred },
      throughput: { none, all, ratio, catchUpMs: catchUp },
    })}\n`,
  );
  // Leave the database as found: no endpoint pointing at a receiver that is about to go away.
  for (const e of endpoints) await ok('DELETE', `${API}/webhooks/${e.id}`, e.secret);
} finally {
  await service.stop();
  receiver.close();
}
