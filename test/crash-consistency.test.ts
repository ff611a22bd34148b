import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { type CheckReport, checkPglite, checkPostgres } from './crash/checks.js';
import { type CrashService, startService } from './crash/service.js';
import { type Call, prng, readAll, Workload } from './crash/workload.js';
import { type OwnServer, startOwnServer } from './helpers/own-postgres.js';
import { freshDatabase, run, skipWithoutPostgres } from './helpers/postgres.js';

/**
 * Crash consistency. A partner's client sends bulk upserts (20 to 100 items, new and known
 * references, status changes, now and then an invalid item), single PUTs, status changes and
 * deletes from four concurrent workers to a real `forecourt serve` process, and remembers every
 * write the service acknowledged (2xx; a bulk upsert per item of `results`). At a random moment
 * the process is killed with SIGKILL and started again on the same data, round after round.
 *
 * After every crash:
 * - every acknowledged write is there with the acknowledged content, read back through the API
 *   (GET /listings?mine=true&status=all, following cursors);
 * - a write in flight (sent, never acknowledged) is there whole or not at all: all items of one
 *   bulk upsert, or none;
 * - the database passes our invariants in plain SQL (counters, status history, uniqueness, no
 *   orphans) and PostgreSQL's own amcheck on every index and table.
 *
 * On the embedded database (one DATA_DIR throughout) and on PostgreSQL (a database of its own);
 * then PostgreSQL itself crashes (immediate stop) under load while the service keeps running: a
 * server of the test's own, since the machine's is shared with the files running meanwhile.
 *
 * CRASH_ROUNDS (default 10) rounds per database; CRASH_PG_RESTARTS (default 2) immediate stops of
 * the PostgreSQL server; CRASH_SEED repeats a run's choices (timing still differs).
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 10);
const PG_RESTARTS = Number(process.env.CRASH_PG_RESTARTS ?? 2);
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const WORKERS = 4;
console.log(
  `# crash-consistency: seed ${SEED} (CRASH_SEED=${SEED} repeats it), ${ROUNDS} rounds per database`,
);

const ADMIN_TOKEN = 'crash-test-admin-token-0123456789abcdef';
const SERVICE_ENV = {
  ADMIN_TOKEN,
  RATE_LIMIT_PER_MINUTE: '1000000',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
  // Commit horizon of sync cursors = 2 × this: the read-back after a restart need not wait long.
  WRITE_TX_TIMEOUT_MS: '1000',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function admin(service: CrashService, method: string, urlPath: string, body: unknown) {
  const reply = await service.call(method, `/api/admin/v1${urlPath}`, { bearer: ADMIN_TOKEN, body });
  assert.ok(reply.status < 300, `admin ${method} ${urlPath} → ${reply.status} ${reply.text}`);
  return reply.body.data;
}

/** One root dealer with two locations, and a partner restricted to it that may write. */
async function setUp(service: CrashService, tag: string): Promise<{ secret: string; dealers: string[] }> {
  const code = (key: string) => `${tag}-${key}-${SEED}`;
  const imported = await admin(service, 'POST', '/dealers/import', {
    dealers: [
      {
        locationCode: code('ROOT'),
        displayName: 'Crash Motors',
        children: [{ locationCode: code('GENT') }, { locationCode: code('BRUGGE') }],
      },
    ],
  });
  const id = (key: string) =>
    imported.dealers.find((d: { locationCode: string }) => d.locationCode === code(key)).id as string;
  const partner = await admin(service, 'POST', '/partners', {
    name: `crash ${tag}`,
    scopes: ['read:listings', 'write:listings'],
    access: { scope: 'restricted', rootProfileIds: [id('ROOT')] },
  });
  return { secret: partner.secret, dealers: [id('ROOT'), id('GENT'), id('BRUGGE')] };
}

interface Totals {
  rounds: number;
  checked: number;
  inFlightApplied: number;
  inFlightLost: number;
  indexes: number;
}

function assertClean(workload: Workload, service: CrashService | undefined, where: string): void {
  assert.deepEqual(
    workload.failures,
    [],
    `${where} (seed ${SEED}):\n${workload.failures.join('\n')}${
      service?.errors.length ? `\nservice errors:\n${service.errors.slice(0, 5).join('\n')}` : ''
    }${service?.stderr() ? `\nservice stderr:\n${service.stderr().slice(-3000)}` : ''}`,
  );
}

function assertHealthy(report: CheckReport, where: string): void {
  assert.deepEqual(report.problems, [], `${where} (seed ${SEED}): ${report.problems.join('\n')}`);
}

/**
 * Start, read back and compare, load, SIGKILL, check the database: `rounds` times, then one
 * last start and comparison.
 */
async function crashRounds(
  label: string,
  dataDir: string,
  env: Record<string, string>,
  check: () => Promise<CheckReport>,
  rng: () => number,
  diagnostic: (line: string) => void,
): Promise<Totals> {
  const totals: Totals = { rounds: 0, checked: 0, inFlightApplied: 0, inFlightLost: 0, indexes: 0 };
  let service: CrashService | undefined = await startService(dataDir, env);
  try {
    const { secret, dealers } = await setUp(service, label);
    const workload = new Workload(rng, dealers, `${label}-${SEED}`);
    workload.abandonRate = 0.1;
    for (let round = 1; round <= ROUNDS + 1; round++) {
      const started = performance.now();
      service ??= await startService(dataDir, env);
      const boot = performance.now() - started;
      const current: CrashService = service;
      const call: Call = (method, urlPath, body, signal) =>
        current.call(method, urlPath, { bearer: secret, body, signal });
      const readStarted = performance.now();
      const verified = workload.verify(await readAll(call));
      const readMs = performance.now() - readStarted;
      assertClean(workload, service, `${label}, after crash ${round - 1}`);
      totals.checked += verified.checked;
      totals.inFlightApplied += verified.inFlightApplied;
      totals.inFlightLost += verified.inFlightLost;
      if (round > ROUNDS) break;

      const before = { ...workload.stats };
      const load = workload.run(call, WORKERS);
      const loadMs = 200 + Math.floor(rng() * 700);
      await sleep(loadMs);
      await current.kill();
      workload.stop();
      await load;
      service = undefined;
      assertClean(workload, current, `${label}, round ${round} load`);
      const checkStarted = performance.now();
      const report = await check();
      const checkMs = performance.now() - checkStarted;
      assertHealthy(report, `${label}, round ${round}`);
      totals.rounds++;
      totals.indexes += report.indexesChecked;
      diagnostic(
        `${label} round ${round}: boot ${Math.round(boot)} ms, read-back ${Math.round(readMs)} ms, checks ${Math.round(checkMs)} ms, verified ${verified.checked} (unacknowledged: ${verified.inFlightApplied} committed, ${verified.inFlightLost} not), ` +
          `then ${workload.stats.requests - before.requests} requests (${workload.stats.ackedItems - before.ackedItems} writes acknowledged, ${workload.stats.unanswered - before.unanswered} unanswered) ` +
          `killed after ${loadMs} ms; ${report.listings} listings, ${report.historyRows} history rows, amcheck ${report.indexesChecked} indexes / ${report.tablesChecked} tables`,
      );
    }
    assert.ok(workload.stats.ackedItems > 0, 'no write was ever acknowledged: the test proved nothing');
    diagnostic(
      `${label}: ${totals.rounds} crashes survived; ${workload.stats.ackedItems} acknowledged writes over ${workload.ackedRefs} references, ${totals.checked} listing comparisons, unacknowledged writes found committed whole: ${totals.inFlightApplied}, absent: ${totals.inFlightLost} (${workload.stats.abandoned} requests abandoned by the client); refused answers ${JSON.stringify(workload.stats.refused)}`,
    );
    return totals;
  } finally {
    await service?.kill();
  }
}

interface PostgresLoad {
  database: { url: string };
  dataDir: string;
  service: CrashService;
  workload: Workload;
  call: Call;
  rng: () => number;
}

/**
 * A fresh PostgreSQL database (on the machine's server, or on `server`), a service on it with a
 * partner set up, and a workload for `fn` to run; afterwards all of it is removed.
 */
async function underPostgresLoad(
  tag: string,
  seedOffset: number,
  fn: (pg: PostgresLoad) => Promise<void>,
  server?: OwnServer,
): Promise<void> {
  const database = server ? { url: server.url('postgres'), drop: async () => {} } : await freshDatabase();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-crash-'));
  let service: CrashService | undefined;
  try {
    service = await startService(dataDir, { ...SERVICE_ENV, DATABASE_URL: database.url });
    const current = service;
    const { secret, dealers } = await setUp(current, tag);
    const rng = prng(SEED + seedOffset);
    const workload = new Workload(rng, dealers, `${tag}-${SEED}`);
    const call: Call = (method, urlPath, body) => current.call(method, urlPath, { bearer: secret, body });
    await fn({ database, dataDir, service: current, workload, call, rng });
  } finally {
    await service?.kill();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** After a load: no unexpected answer, every acknowledged write read back, the database healthy. */
async function verifyAfterLoad(pg: Omit<PostgresLoad, 'rng'>, where: string) {
  assertClean(pg.workload, pg.service, `${where}: load`);
  const verified = pg.workload.verify(await readAll(pg.call));
  assertClean(pg.workload, pg.service, `${where}: read-back`);
  const report = await checkPostgres(pg.database.url, pg.dataDir);
  assertHealthy(report, where);
  return { verified, report };
}

describe(`crash consistency: SIGKILL under concurrent writes, seed ${SEED}`, () => {
  test(`embedded database (PGlite): ${ROUNDS} crashes on one DATA_DIR`, {
    skip: process.env.DATABASE_URL
      ? 'runs in the pass without DATABASE_URL (each pass of the suite tests one database)'
      : false,
  }, async (t) => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-crash-'));
    let ok = false;
    try {
      const rounds = { n: 0 };
      await crashRounds(
        'pglite',
        dataDir,
        SERVICE_ENV,
        // amcheck needs a second open of the database: every third round and the last.
        () => checkPglite(dataDir, ++rounds.n % 3 === 0 || rounds.n === ROUNDS),
        prng(SEED),
        (line) => t.diagnostic(line),
      );
      ok = true;
    } finally {
      if (ok) rmSync(dataDir, { recursive: true, force: true });
      else t.diagnostic(`data directory kept for inspection: ${dataDir}`);
    }
  });

  test(`PostgreSQL: ${ROUNDS} crashes of the service on its own database`, {
    skip: skipWithoutPostgres,
  }, async (t) => {
    const database = await freshDatabase();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-crash-'));
    try {
      await crashRounds(
        'postgres',
        dataDir,
        { ...SERVICE_ENV, DATABASE_URL: database.url },
        () => checkPostgres(database.url, dataDir),
        prng(SEED + 1),
        (line) => t.diagnostic(line),
      );
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL: the service's connections terminated under load (pg_terminate_backend)", {
    skip: skipWithoutPostgres,
  }, async (t) => {
    // Regression: a connection lost while a write transaction held it emitted an unhandled
    // 'error' event on the pg client, and the whole service process died.
    await underPostgresLoad('pgterm', 3, async (pg) => {
      const { database, service, workload, call, rng } = pg;
      const load = workload.run(call, WORKERS);
      let terminated = 0;
      try {
        for (let i = 0; i < 6; i++) {
          await sleep(150 + Math.floor(rng() * 250));
          const { rows } = await run(
            database.url,
            `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'forecourt'`,
          );
          terminated += rows[0].n;
        }
        await sleep(300);
      } finally {
        workload.stop();
        await load;
      }
      assert.equal(service.child.exitCode, null, `the service died:\n${service.stderr().slice(-3000)}`);
      assert.equal((await service.call('GET', '/readyz')).status, 200);
      const { verified, report } = await verifyAfterLoad(pg, 'connections terminated');
      assert.ok(terminated > 0 && workload.stats.ackedItems > 0);
      t.diagnostic(
        `${terminated} connections terminated; ${workload.stats.requests} requests, ${workload.stats.ackedItems} writes acknowledged, refused ${JSON.stringify(workload.stats.refused)}; ` +
          `verified ${verified.checked} (unacknowledged: ${verified.inFlightApplied} committed, ${verified.inFlightLost} not); ${report.listings} listings`,
      );
    });
  });

  describe('PostgreSQL server crash (immediate stop) under load', { skip: skipWithoutPostgres }, () => {
    // A server of the test's own to crash: the machine's is shared with the files running meanwhile.
    let server: OwnServer | undefined;
    after(() => server?.remove());

    test(`${PG_RESTARTS} immediate stops and starts of the server while the service writes`, async (t) => {
      server = await startOwnServer();
      const own = server;
      await underPostgresLoad(
        'pgstop',
        2,
        async (pg) => {
          const { service: current, workload, call, rng } = pg;
          for (let round = 1; round <= PG_RESTARTS; round++) {
            const before = { ...workload.stats };
            const load = workload.run(call, WORKERS);
            const loadMs = 300 + Math.floor(rng() * 900);
            const pauseMs = 200 + Math.floor(rng() * 800);
            let recoveredMs = 0;
            try {
              await sleep(loadMs);
              const stoppedAt = performance.now();
              await own.crashAndRestart(pauseMs);
              // The service was never restarted: its pool finds the server again by itself.
              for (let i = 0; ; i++) {
                if (i === 200) assert.fail('the service was not ready 20 s after PostgreSQL came back');
                if (current.child.exitCode !== null || current.child.signalCode !== null)
                  assert.fail(
                    `the service exited (${await current.exited}) when PostgreSQL crashed:\n${current.stderr().slice(-3000)}\n${current.errors.slice(0, 3).join('\n')}`,
                  );
                if ((await current.call('GET', '/readyz')).status === 200) break;
                await sleep(100);
              }
              recoveredMs = performance.now() - stoppedAt;
              await sleep(500);
            } finally {
              workload.stop();
              await load;
            }
            const { verified, report } = await verifyAfterLoad(pg, `server crash ${round}`);
            t.diagnostic(
              `server crash ${round}: down ${pauseMs} ms, service ready again after ${Math.round(recoveredMs)} ms; ` +
                `${workload.stats.requests - before.requests} requests, ${workload.stats.ackedItems - before.ackedItems} writes acknowledged, ` +
                `refused ${JSON.stringify(workload.stats.refused)}; verified ${verified.checked} (unacknowledged: ${verified.inFlightApplied} committed, ${verified.inFlightLost} not); ` +
                `${report.listings} listings, amcheck ${report.indexesChecked} indexes / ${report.tablesChecked} tables`,
            );
          }
        },
        own,
      );
    });
  });
});
