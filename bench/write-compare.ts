/**
 * Writes through the API, commit against commit, side by side in one run on one machine: each
 * commit is exported (git archive) and built into a directory of its own, served on a fresh
 * database of its own loaded with the same listings through its own API, and the services are
 * measured in alternating rounds (A B, then B A, …) so that a busy machine weighs on each alike.
 *
 *   node --import tsx bench/write-compare.ts --refs f9f46f9,HEAD [--database-url postgres://…/any]
 *     [--rounds 3] [--duration 10] [--connections 8] [--listings 10000] [--only put-new,put-replace,bulk-100]
 *
 * Without --database-url: the embedded database (PGlite), 4 connections by default. With it: a new
 * database per commit on that server, dropped at the end. Scenarios: `put-new` (PUT of a new
 * reference each time, with images of its own), `put-replace` (PUT of a loaded reference with a
 * changed title, its images kept),
 * `bulk-100` (bulk upsert of 100 new listings; listings per second). Prints requests per second
 * (or listings per second) per round, the median, and each commit's median over the first's.
 * The image checker is off in every service unless --image-checks (it checks in the background).
 * Each scenario is tried once on each service first: a refusal stops the run, saying why. Only
 * the service measured runs (each is started for its turn and warms up on each scenario for 3 s):
 * newer commits have background work that would weigh on the others.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import pg from 'pg';
import { request } from 'undici';
import { load } from './lib/load.js';
import { type Proc, startService } from './lib/processes.js';
import { listingBody, putBody } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    refs: { type: 'string', default: 'f9f46f9,HEAD' },
    'database-url': { type: 'string' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string' },
    listings: { type: 'string', default: '10000' },
    only: { type: 'string', default: 'put-new,put-replace,bulk-100' },
    // The image checker (docs/images.md) left running in each service's background.
    'image-checks': { type: 'boolean', default: false },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const refs = values.refs!.split(',');
const serverUrl = values['database-url'];
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections ?? (serverUrl ? 8 : 4));
const listings = Number(values.listings);
const scenarios = values.only!.split(',');
const log = (msg: string) => process.stderr.write(`[write-compare] ${msg}\n`);
const API = '/api/external/v1';

/** The commit's tree, built as `npm run build` would (esbuild, file by file, as the tests do). */
async function checkout(ref: string, dir: string): Promise<string> {
  const sha = execFileSync('git', ['rev-parse', '--short', ref], { cwd: ROOT }).toString().trim();
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${dir}"`], { cwd: ROOT });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const sources: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(child);
    }
  };
  walk('src');
  await build({
    entryPoints: sources.map((s) => path.join(dir, s)),
    outdir: path.join(dir, 'dist'),
    outbase: path.join(dir, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  return sha;
}

async function admin(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
const adminUrl = () => {
  const u = new URL(serverUrl!);
  u.pathname = '/postgres';
  return u.toString();
};

interface Served {
  ref: string;
  sha: string;
  /** The built checkout, and the service's environment (its database). */
  dir: string;
  env: Record<string, string>;
  /** Running only for its turn: another commit's background work must not weigh on it. */
  service?: Proc | undefined;
  secret: string;
  database?: string;
}

async function up(s: Served): Promise<Proc> {
  s.service = await startService(s.env, { root: s.dir });
  return s.service;
}
async function down(s: Served): Promise<void> {
  await s.service?.stop();
  s.service = undefined;
}

async function call(s: Served, method: string, p: string, body: unknown, token = s.secret) {
  const res = await request(`${s.service!.url}${p}`, {
    method: method as 'POST',
    dispatcher: s.service!.dispatcher,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text) as { data: Record<string, unknown> };
}

/**
 * One request of each scenario, before anything is measured: an answer that is not a success
 * would only show as a count of errors.
 */
async function probe(s: Served): Promise<void> {
  const headers = { authorization: `Bearer ${s.secret}`, 'content-type': 'application/json' };
  for (const [method, p, body] of [
    ['PUT', `${API}/listings/PROBE-1`, listingBody('PROBE-1', 1)],
    [
      'POST',
      `${API}/listings/bulk-upsert`,
      Array.from({ length: 100 }, (_, i) => listingBody(`PROBE-${i}`, i)),
    ],
  ] as const) {
    const res = await request(`${s.service!.url}${p}`, {
      method,
      dispatcher: s.service!.dispatcher,
      headers,
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300 || /"errorCount":[1-9]/.test(text)) {
      throw new Error(`${s.ref}: ${method} ${p} → ${res.statusCode} ${text.slice(0, 500)}`);
    }
  }
}

/** The images of every loaded listing, which put-replace keeps: a replace that changes the text only. */
const REPLACE_IMAGES = [1, 2, 3].map((n) => `https://images.example.com/bench/kept/${n}.jpg`);

const work = mkdtempSync(path.join(os.tmpdir(), 'fc-write-compare-'));
const served: Served[] = [];
try {
  for (const [i, ref] of refs.entries()) {
    const dir = path.join(work, `tree-${i}`);
    log(`${ref}: export and build`);
    const sha = await checkout(ref, dir);
    const adminToken = randomBytes(24).toString('hex');
    let database: string | undefined;
    const env: Record<string, string> = {
      ADMIN_TOKEN: adminToken,
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
      // Off unless asked: its checks of the bench's unreachable image URLs, and the rewrites of the
      // listings using each one, run in the background of every service, the one measured or not.
      ...(values['image-checks'] ? {} : { IMAGE_CHECK_CONCURRENCY: '0' }),
    };
    if (serverUrl) {
      database = `fc_write_compare_${process.pid}_${i}`;
      await admin(adminUrl(), `CREATE DATABASE ${database}`);
      const own = new URL(serverUrl);
      own.pathname = `/${database}`;
      env.DATABASE_URL = own.toString();
    } else env.DATA_DIR = path.join(work, `data-${i}`);
    log(`${ref} (${sha}): start`);
    const s: Served = { ref, sha, dir, env, secret: '', ...(database ? { database } : {}) };
    served.push(s);
    await up(s);
    await call(s, 'POST', '/api/admin/v1/dealers', { locationCode: 'G001-L001' }, adminToken);
    const partner = await call(
      s,
      'POST',
      '/api/admin/v1/partners',
      { name: 'Bench', scopes: ['read:listings', 'write:listings'], access: { scope: 'global' } },
      adminToken,
    );
    s.secret = partner.data.secret as string;
    log(`${ref}: load ${listings} listings`);
    for (let b = 0; b * 100 < listings; b++) {
      const items = Array.from({ length: Math.min(100, listings - b * 100) }, (_, j) => ({
        ...listingBody(`LOAD-${b * 100 + j}`, b * 100 + j),
        images: REPLACE_IMAGES,
      }));
      await call(s, 'POST', `${API}/listings/bulk-upsert`, items);
    }
    // Statistics for what was just loaded, as a database in service has them (autovacuum would
    // take its time; PGlite's own maintenance analyses within ten minutes of a start).
    if (env.DATABASE_URL) await admin(env.DATABASE_URL, 'ANALYZE');
    await probe(s);
    await down(s);
  }

  const measure = async (s: Served, scenario: string, round: string, seconds: number) => {
    const service = s.service!;
    const headers = { authorization: `Bearer ${s.secret}`, 'content-type': 'application/json' };
    const base = {
      connections,
      durationS: seconds,
      method: scenario === 'bulk-100' ? 'POST' : 'PUT',
      headers,
    };
    let n = 0;
    if (scenario === 'put-new') {
      return load({
        ...base,
        url: `${service.url}${API}/listings/x`,
        // Images of its own, as a new listing has ([<id>]: unique per request).
        body: JSON.stringify(putBody('NEW-[<id>]', 1)),
        idReplacement: true,
        path: () => `${API}/listings/NEW-${round}-${n++}`,
      });
    }
    if (scenario === 'put-replace') {
      // A new title each time ([<id>]): every PUT changes the listing.
      return load({
        ...base,
        url: `${service.url}${API}/listings/x`,
        body: JSON.stringify({
          ...putBody('ignored', 1),
          title: 'Volkswagen Golf [<id>]',
          images: REPLACE_IMAGES,
        }),
        idReplacement: true,
        path: () => `${API}/listings/LOAD-${(n++ * 7919) % listings}`,
      });
    }
    const items = Array.from({ length: 100 }, (_, i) => listingBody(`BULK-${round}-[<id>]-${i}`, i));
    const measured = await load({
      ...base,
      url: `${service.url}${API}/listings/bulk-upsert`,
      body: JSON.stringify(items),
      idReplacement: true,
    });
    return { ...measured, requestsPerSecond: measured.requestsPerSecond * 100 };
  };

  // rate[scenario][service index][round]
  const rates = new Map(scenarios.map((sc) => [sc, served.map(() => [] as number[])]));
  const errors = new Map(scenarios.map((sc) => [sc, served.map(() => 0)]));
  for (let round = 0; round < rounds; round++) {
    // Each round in the opposite order of the one before. A service runs for its turn only, and
    // warms up on each scenario first (not counted).
    const order = round % 2 === 0 ? served.map((_, i) => i) : served.map((_, i) => i).reverse();
    for (const i of order) {
      const s = served[i]!;
      await up(s);
      try {
        for (const scenario of scenarios) {
          await measure(s, scenario, `w${round}`, Math.min(3, durationS));
          const measured = await measure(s, scenario, `r${round}`, durationS);
          log(
            `round ${round + 1} ${scenario} ${s.ref}: ${measured.requestsPerSecond.toFixed(0)}/s, p50 ${measured.p50} ms, ${measured.errors} errors`,
          );
          rates.get(scenario)![i]!.push(measured.requestsPerSecond);
          errors.get(scenario)![i]! += measured.errors;
        }
      } finally {
        await down(s);
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const lines = [
    `${serverUrl ? 'PostgreSQL' : 'PGlite'}, ${listings} listings loaded, ${connections} connections, ${durationS} s × ${rounds} alternating rounds`,
    '(requests per second; bulk-100: listings per second)',
  ];
  for (const scenario of scenarios) {
    const byService = rates.get(scenario)!;
    const first = median(byService[0]!);
    for (const [i, s] of served.entries()) {
      const xs = byService[i]!;
      lines.push(
        `${scenario.padEnd(12)} ${s.ref.padEnd(10)} ${s.sha}  median ${median(xs).toFixed(0).padStart(6)}  rounds ${xs.map((x) => x.toFixed(0)).join(' ')}  ×${(median(xs) / first).toFixed(2)}  errors ${errors.get(scenario)![i]}`,
      );
    }
  }
  console.log(lines.join('\n'));
  writeFileSync(path.join(work, 'result.txt'), lines.join('\n'));
} finally {
  for (const s of served) await down(s).catch(() => {});
  if (serverUrl) {
    for (const s of served) {
      if (s.database)
        await admin(adminUrl(), `DROP DATABASE IF EXISTS ${s.database} WITH (FORCE)`).catch(() => {});
    }
  }
  rmSync(work, { recursive: true, force: true });
}
