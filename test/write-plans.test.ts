import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Db } from '../src/store/db.js';
import { openDb } from '../src/store/open.js';
import { embedded, seedEmbeddedDb } from './helpers/pglite-template.js';

/**
 * A listing write's statements (PREPARED_WRITES, store/postgres-statements.ts) are prepared by name
 * on both databases, and a write transaction (genericPlans) lets them, and what they fire, run a
 * plan made once (docs/benchmarks.md, "The cost of a write"). Named here by a write's statement
 * name, with texts of the test's own.
 */
let db: Db;
let dir: string;
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fc-write-plans-'));
  if (embedded({})) await seedEmbeddedDb(dir);
  db = await openDb({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: dir,
    statementTimeoutMs: 5000,
    connectTimeoutMs: 5000,
    poolSize: 1,
  });
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const unique = (sql: string) => `${sql} /* ${process.pid}-${Date.now()}-${Math.random()} */`;
const planned = (sql: string) =>
  db.query<{ generic_plans: number; custom_plans: number }>(
    'T',
    'SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement = $1',
    [sql],
  );

test('in a write transaction, a write statement is prepared once and may run one generic plan', async () => {
  const sql = unique('SELECT $1::int AS n');
  const inside = await db.transaction(
    async (tx) => {
      for (const n of [1, 2, 3, 4, 5, 6, 7])
        assert.deepEqual(await tx.query('LockListings', sql, [n]), [{ n }]);
      return tx.query<{ mode: string }>('T', `SELECT current_setting('plan_cache_mode') AS mode`);
    },
    { genericPlans: true },
  );
  assert.deepEqual(inside, [{ mode: 'auto' }]);
  const [plans] = await planned(sql);
  assert.ok(plans, 'prepared by name');
  assert.equal(plans.custom_plans + plans.generic_plans, 7);
  assert.ok(plans.generic_plans > 0, `generic plans: ${JSON.stringify(plans)}`);
  // Only for that transaction: the service's connections otherwise plan for the values (PostgreSQL).
  const [outside] = await db.query<{ mode: string }>(
    'T',
    `SELECT current_setting('plan_cache_mode') AS mode`,
  );
  assert.equal(outside!.mode, process.env.DATABASE_URL ? 'force_custom_plan' : 'auto');
});

test('a prepared write statement that failed runs again; one that never parsed is parsed again', async () => {
  const divide = unique('SELECT 1 / $1::int AS n');
  await assert.rejects(db.query('InsertListings', divide, [0]), /division by zero/);
  assert.deepEqual(await db.query('InsertListings', divide, [1]), [{ n: 1 }]);
  await assert.rejects(
    db.transaction((tx) => tx.query('UpdateListings', divide, [0])),
    /division by zero/,
  );
  assert.deepEqual(await db.transaction((tx) => tx.query('UpdateListings', divide, [1])), [{ n: 1 }]);
  // Refused at its parse: nothing was prepared, so the next run parses it again (and is refused for
  // what it is, not for a name already taken).
  const broken = unique('SELEC $1::int');
  for (let i = 0; i < 2; i++) await assert.rejects(db.query('SetListingStatus', broken, [1]), /syntax error/);
  assert.deepEqual(await planned(broken), []);
});
