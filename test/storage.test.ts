import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadMigrations, migrate, pendingMigrations } from '../src/store/migrate.js';
import { openDb } from '../src/store/open.js';

const options = (dataDir: string) => ({
  databaseUrl: process.env.DATABASE_URL,
  dataDir,
  statementTimeoutMs: 5000,
  connectTimeoutMs: 5000,
  poolSize: 2,
});

test('migrations are recorded and applying them again changes nothing', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-migrate-'));
  const db = await openDb(options(dir));
  try {
    await migrate(db);
    assert.deepEqual(await migrate(db), []);
    assert.deepEqual(await pendingMigrations(db), []);
    const rows = await db.query<{ version: number }>(
      'T',
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    assert.deepEqual(
      rows.map((r) => r.version),
      loadMigrations().map((m) => m.version),
    );
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failing migration rolls back its whole batch: nothing of it is applied or recorded', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-migrate-'));
  const db = await openDb(options(dir));
  const table = `migrate_probe_${process.pid}_${Date.now()}`;
  try {
    await migrate(db);
    const batch = [
      ...loadMigrations(),
      { version: 900_001, name: '900001_probe.sql', sql: `CREATE TABLE ${table} (id int)` },
      { version: 900_002, name: '900002_broken.sql', sql: 'SELECT no_such_column FROM schema_migrations' },
    ];
    await assert.rejects(migrate(db, batch), /no_such_column/);
    const created = await db.query<{ n: number }>(
      'T',
      'SELECT count(*)::int AS n FROM pg_class WHERE relname = $1',
      [table],
    );
    assert.equal(created[0]!.n, 0, 'the good migration before the broken one was rolled back too');
    const recorded = await db.query<{ n: number }>(
      'T',
      'SELECT count(*)::int AS n FROM schema_migrations WHERE version > 900000',
    );
    assert.equal(recorded[0]!.n, 0);
    assert.deepEqual(await pendingMigrations(db), [], 'the real migrations stay applied');
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PostgreSQL: prepared statements are planned for their values every time', {
  skip: !process.env.DATABASE_URL,
}, async () => {
  // The listing page runs prepared; a generic plan for it took 29 ms instead of 2 at 1M listings
  // (docs/benchmarks.md), so the service's connections must never let PostgreSQL switch to one.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-plan-'));
  const db = await openDb(options(dir));
  try {
    const rows = await db.query<{ plan_cache_mode: string }>('T', 'SHOW plan_cache_mode');
    assert.equal(rows[0]!.plan_cache_mode, 'force_custom_plan');
    // One connection (a transaction), so its prepared statements can be read back: the page
    // statement is prepared once and, past the five runs after which PostgreSQL may switch, still
    // planned for each value (and answers for it).
    const sql = `SELECT $1::int AS n /* ${process.pid}-${Date.now()} */`;
    const plans = await db.transaction(async (tx) => {
      for (const n of [1, 2, 3, 4, 5, 6, 7]) {
        const got = await tx.query<{ n: number }>('ListListings', sql, [n]);
        assert.equal(got[0]!.n, n);
      }
      return tx.query<{ generic_plans: number; custom_plans: number }>(
        'T',
        'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1',
        [sql],
      );
    });
    assert.deepEqual(plans, [{ generic_plans: 0, custom_plans: 7 }]);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second process opening the same embedded data directory gets a clear error', {
  skip: !!process.env.DATABASE_URL,
}, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-lock-'));
  const db = await openDb(options(dir));
  try {
    await migrate(db);
    const child = spawnSync(process.execPath, ['bin/forecourt.js', 'migrate'], {
      env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.status, 1);
    assert.match(child.stderr, /in use by another Forecourt process \(pid \d+\)/);
    // The first process still works: nothing was corrupted.
    const rows = await db.query<{ n: number }>('T', 'SELECT count(*) AS n FROM schema_migrations');
    assert.ok(rows[0]!.n >= 1);
  } finally {
    await db.close();
  }
  // Once released, another process can open it.
  const again = spawnSync(process.execPath, ['bin/forecourt.js', 'migrate'], {
    env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /up to date/);
  rmSync(dir, { recursive: true, force: true });
});

test('a bad configuration value stops start-up with a message naming the variable', () => {
  const child = spawnSync(process.execPath, ['bin/forecourt.js', 'serve'], {
    env: { ...process.env, PORT: 'eighty', DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(child.status, 1);
  assert.match(child.stderr, /PORT/);
});

test('backup of the embedded database: a copy of DATA_DIR taken after a graceful stop opens with every listing', {
  skip: process.env.DATABASE_URL ? 'embedded database only' : false,
}, async () => {
  const { bootApp, createPartner, createTree, listingBody, unique } = await import('./helpers/app.js');
  const app = await bootApp({}, { keepData: true });
  const tree = await createTree(app);
  const partner = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'write:listings'],
  });
  const reference = unique('backup');
  const put = await app.call('PUT', `/api/external/v1/listings/${reference}`, {
    secret: partner.secret,
    body: listingBody({ title: 'Backed up' }),
  });
  assert.equal(put.status, 201);
  await app.close();
  const copy = mkdtempSync(path.join(os.tmpdir(), 'fc-backup-'));
  cpSync(app.dataDir, copy, { recursive: true });
  rmSync(app.dataDir, { recursive: true, force: true });
  const restored = await bootApp({}, { dataDir: copy });
  try {
    const got = await restored.call('GET', `/api/external/v1/listings/${put.body.data.listingId}`, {
      secret: partner.secret,
    });
    assert.equal(got.status, 200);
    assert.equal(got.body.data.title, 'Backed up');
  } finally {
    await restored.close();
  }
});
