/**
 * The statements a listing write sends the database, counted: what a single PUT (new, changed,
 * unchanged, with If-Match), a PATCH, a status change and a bulk of 100 cost in round trips,
 * through the domain's write path on a small database of its own. Deterministic, so it needs no
 * quiet machine; with --explain, each statement's EXPLAIN (ANALYZE, BUFFERS) too (PostgreSQL).
 *
 *   node --import tsx bench/write-statements.ts [--database-url postgres://…/any] [--explain] [--time N]
 *
 * Without --database-url: PGlite in a temporary directory. With it: a new database on that
 * server, dropped at the end. A round trip is one statement, or the transaction's BEGIN (with its
 * settings) or COMMIT. With --time N, N single PUTs of new listings and N that change one, one
 * after another, then N/10 bulk upserts of 100 new listings, with the milliseconds each statement took (from sending to the answer) and what
 * was spent between statements (the domain's own work), per PUT.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { Partner } from '../src/domain/access.js';
import { listingBodySchema } from '../src/domain/listings/input.js';
import { listingWrites } from '../src/domain/listings/writes/index.js';
import type { Db, Queryable } from '../src/store/db.js';
import { dealerStore } from '../src/store/dealers.js';
import { listingJsonProjection } from '../src/store/listings/json.js';
import { listingWriteStore } from '../src/store/listings/writes.js';
import { migrate } from '../src/store/migrate.js';
import { openDb } from '../src/store/open.js';
import { testDataStore } from '../src/store/test-data.js';
import { listingBody } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    explain: { type: 'boolean', default: false },
    time: { type: 'string', default: '0' },
  },
});

interface Sent {
  name: string;
  sql: string;
  params: readonly unknown[];
  /** Milliseconds from sending to the answer. */
  ms?: number;
  /** CPU milliseconds meanwhile (`cpu` of counting()). */
  cpu?: number;
}

/** `db` with every statement it sends listed in `log`, a transaction's BEGIN and COMMIT included. */
function counting(db: Db, log: Sent[], cpu: { now: () => number }): Db {
  const wrap = (q: Queryable): Queryable => ({
    query: async (name, sql, params = []) => {
      const sent: Sent = { name, sql, params };
      log.push(sent);
      const t = performance.now();
      const c = cpu.now();
      try {
        return await q.query(name, sql, params);
      } finally {
        sent.ms = performance.now() - t;
        sent.cpu = cpu.now() - c;
      }
    },
    exec: (name, sql) => {
      log.push({ name, sql, params: [] });
      return q.exec(name, sql);
    },
  });
  return {
    ...db,
    kind: db.kind,
    ...wrap(db),
    transaction: (fn, options) => {
      const begin: Sent = { name: 'BEGIN', sql: '', params: [] };
      const end: Sent = { name: 'COMMIT/ROLLBACK', sql: '', params: [] };
      log.push(begin);
      let t = performance.now();
      return db
        .transaction(async (tx) => {
          begin.ms = performance.now() - t;
          try {
            return await fn(wrap(tx));
          } finally {
            log.push(end);
            t = performance.now();
          }
        }, options)
        .finally(() => {
          end.ms = performance.now() - t;
        });
    },
    ping: () => db.ping(),
    close: () => db.close(),
  };
}

async function adminQuery(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const serverUrl = values['database-url'];
const dbName = `fc_write_statements_${process.pid}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fc-write-statements-'));
let url: string | undefined;
if (serverUrl) {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  await adminQuery(admin.toString(), `CREATE DATABASE ${dbName}`);
  const own = new URL(serverUrl);
  own.pathname = `/${dbName}`;
  url = own.toString();
}
const raw = await openDb({
  databaseUrl: url,
  dataDir,
  statementTimeoutMs: 60_000,
  connectTimeoutMs: 10_000,
  poolSize: 2,
});

try {
  await migrate(raw);
  const partner: Partner = {
    id: crypto.randomUUID(),
    test: false,
    name: 'Bench',
    scopes: ['write:listings'],
    access: { scope: 'global', rootProfileIds: [], profileIds: [] },
    rateLimitPerMinute: null,
  };
  await raw.query(
    'P',
    `INSERT INTO partners (id, name, scopes, access_scope) VALUES ($1, 'Bench', '{}', 'global')`,
    [partner.id],
  );
  await raw.query('D', `INSERT INTO dealer_profiles (id, location_code) VALUES ($1, 'G001-L001')`, [
    crypto.randomUUID(),
  ]);
  const log: Sent[] = [];
  const cpu = { now: () => 0 };
  const db = counting(raw, log, cpu);
  const writes = listingWrites({
    db,
    dealers: dealerStore(db),
    testData: testDataStore(db),
    store: listingWriteStore(db),
    syncHorizon: { forget() {} },
    schema: listingBodySchema({ historyReportHosts: [] }),
    view: listingJsonProjection('https://bench.example/listings'),
    writeTimeoutMs: 10_000,
  });
  // Bodies as the benchmarks send them (5 images, 3 features, the dealer by location code).
  const body = (reference: string, i: number, mileage = 0) => ({
    ...listingBody(reference, i),
    ...(mileage ? { mileage } : {}),
  });
  const put = async (reference: string, b: Record<string, unknown>, ifMatch?: string) =>
    writes.upsert(partner, [{ index: 0, reference, body: b }], { dryRun: false, single: { ifMatch } });

  const scenarios: [string, () => Promise<unknown>][] = [];
  let etag: string | undefined;
  scenarios.push(['PUT new', async () => ({ etag } = await put('S-1', body('S-1', 1)))]);
  scenarios.push(['PUT changed', async () => ({ etag } = await put('S-1', body('S-1', 1, 99_000)))]);
  scenarios.push(['PUT unchanged', () => put('S-1', body('S-1', 1, 99_000))]);
  scenarios.push(['PUT changed, If-Match', () => put('S-1', body('S-1', 1, 98_000), etag)]);
  scenarios.push(['PUT new, If-Match: *', () => put('S-2', body('S-2', 2), '*').catch(() => undefined)]);
  scenarios.push(['PATCH', () => writes.patch(partner, 'S-1', { mileage: 97_000 }, {})]);
  scenarios.push(['status change', () => writes.changeStatus(partner, 'S-1', 'pending')]);
  const bulkItems = (round: number) =>
    Array.from({ length: 100 }, (_, i) => {
      // Half the references known (written by the round before), half new.
      const reference = i < 50 ? `B-${i}` : `B-${round}-${i}`;
      return { index: i, reference, body: body(reference, i, 1000 + round) };
    });
  await writes.upsert(partner, bulkItems(0), { dryRun: false });
  scenarios.push([
    'bulk 100 (50 new, 50 changed)',
    () => writes.upsert(partner, bulkItems(1), { dryRun: false }),
  ]);
  scenarios.push([
    'bulk 100 (50 new, 50 unchanged)',
    () =>
      writes.upsert(
        partner,
        bulkItems(1).map((it) =>
          it.index < 50
            ? it
            : { ...it, reference: `C-${it.index}`, body: body(`C-${it.index}`, it.index, 1001) },
        ),
        { dryRun: false },
      ),
  ]);

  const explained: Sent[] = [];
  console.log(`${url ? 'PostgreSQL' : 'PGlite'}: round trips of each write`);
  for (const [name, run] of scenarios) {
    log.length = 0;
    await run();
    const sent = [...log];
    console.log(`${String(sent.length).padStart(3)}  ${name}: ${sent.map((s) => s.name).join(', ')}`);
    if (name === 'PUT new' || name === 'PUT changed') explained.push(...sent.filter((s) => s.sql));
  }
  const times = Number(values.time);
  // CPU as well as time: a busy machine stretches the time, far less the CPU each PUT takes. This
  // process's (the domain, and PGlite's database), and on a local PostgreSQL its backends'.
  const backends = url
    ? (
        await raw.query<{ pid: number }>(
          'Backends',
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
        )
      ).map((r) => r.pid)
    : [];
  const backendMs = () => {
    try {
      return backends
        .map((pid) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6)
        .reduce((a, b) => a + b, 0);
    } catch {
      return Number.NaN; // not on this machine
    }
  };
  const ownMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  cpu.now = () => ownMs() + (url ? backendMs() : 0);
  // A bulk of 100 new listings a tenth as often as the PUTs (each is 100 listings).
  const newBulk = (i: number) =>
    writes.upsert(
      partner,
      Array.from({ length: 100 }, (_, k) => ({
        index: k,
        reference: `N-${i}-${k}`,
        body: body(`N-${i}-${k}`, k),
      })),
      { dryRun: false },
    );
  for (const [label, runs, write] of [
    ['PUT new', times, (i: number) => put(`T-${i}`, body(`T-${i}`, i))],
    ['PUT changed', times, (i: number) => put(`T-${i}`, body(`T-${i}`, i, 50_000 + i))],
    ['bulk of 100 new', Math.ceil(times / 10), newBulk],
  ] as const) {
    if (!times) break;
    const byName = new Map<string, number>();
    const cpuByName = new Map<string, number>();
    let total = 0;
    const [own, server] = [ownMs(), backendMs()];
    for (let i = 0; i < runs; i++) {
      log.length = 0;
      const t = performance.now();
      await write(i);
      total += performance.now() - t;
      for (const s of log) {
        byName.set(s.name, (byName.get(s.name) ?? 0) + (s.ms ?? 0));
        cpuByName.set(s.name, (cpuByName.get(s.name) ?? 0) + (s.cpu ?? 0));
      }
    }
    const cpu = `CPU ${((ownMs() - own) / runs).toFixed(3)} ms here${url ? `, ${((backendMs() - server) / runs).toFixed(3)} ms in PostgreSQL` : ''}`;
    const inStatements = [...byName.values()].reduce((a, b) => a + b, 0);
    console.log(`\n${label}, ${runs} one after another: ${(total / runs).toFixed(3)} ms each; ${cpu}`);
    console.log('    time       CPU');
    for (const [name, ms] of byName) {
      const c = cpuByName.get(name)! / runs;
      console.log(
        `${(ms / runs).toFixed(3).padStart(8)}  ${c ? c.toFixed(3).padStart(8) : '        '}  ${name}`,
      );
    }
    console.log(`${((total - inStatements) / runs).toFixed(3).padStart(8)}  (between statements)`);
  }
  if (values.explain) {
    for (const s of explained) {
      const plan = await raw
        .transaction(async (tx) => {
          const rows = await tx.query<Record<string, string>>(
            'Explain',
            `EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`,
            s.params,
          );
          throw Object.assign(new Error('rollback'), { rows });
        })
        .catch((e: { rows?: Record<string, string>[] }) => {
          if (!e.rows) throw e;
          return e.rows;
        });
      console.log(`\n-- ${s.name}\n${plan.map((r) => Object.values(r)[0]).join('\n')}`);
    }
  }
} finally {
  await raw.close();
  if (serverUrl) {
    const admin = new URL(serverUrl);
    admin.pathname = '/postgres';
    await adminQuery(admin.toString(), `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
  rmSync(dataDir, { recursive: true, force: true });
}
