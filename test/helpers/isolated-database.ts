import pg from 'pg';
import { migrate } from '../../src/store/migrate.js';
import { openDb } from '../../src/store/open.js';

/**
 * Preloaded (`--import`) by scripts/test.mjs when test files run side by side on PostgreSQL: each
 * test file's process gets a database of its own on the server of DATABASE_URL, named after the
 * shared one (`<name>_f<pid>`), and DATABASE_URL is pointed at it before any test code reads it.
 * Files then never see each other's rows: a global partner's list, a count, a sync walk are the
 * file's own, as when files ran one at a time. scripts/test.mjs drops these databases at the end.
 *
 * DATABASE_DIRECT_URL and PGBOUNCER_URL, when set, are pointed at it too.
 *
 * Each is a copy of one migrated database of the run (`<name>_template`), made by the first file
 * that needs it under an advisory lock: applying the migrations took 330 ms of the server's and
 * the file's time, a copy 30 ms, and a run creates about ninety. The service's boot still runs the
 * migrator, which finds everything applied (what a restarted service does); migrating a new
 * database is tested on databases of the tests' own (test/postgres-operations.test.ts).
 *
 * Only in the processes that run a test file (node's runner marks them with NODE_TEST_CONTEXT),
 * not in the runner itself.
 */
const shared = process.env.DATABASE_URL;
if (shared && process.env.NODE_TEST_CONTEXT) {
  const url = new URL(shared);
  const name = `${url.pathname.slice(1)}_f${process.pid}`;
  const admin = new URL(shared);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const template = `${url.pathname.slice(1)}_template`;
    // One lock for the run's template: the first file makes it while the others wait.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (found.rowCount === 0) await createTemplate(client, template);
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [template]);
    }
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await client.end();
  }
  url.pathname = `/${name}`;
  process.env.DATABASE_URL = url.toString();
  // Behind a pooler (.ci/run's PgBouncer passes), the way around it and the pooler's own address
  // name the same database.
  for (const companion of ['DATABASE_DIRECT_URL', 'PGBOUNCER_URL']) {
    const value = process.env[companion];
    if (!value) continue;
    const other = new URL(value);
    other.pathname = `/${name}`;
    process.env[companion] = other.toString();
  }
}

/**
 * The run's migrated database, migrated around a pooler when there is a way (as the service
 * migrates: store/open.ts). Closed before any copy: PostgreSQL copies no database in use.
 */
async function createTemplate(admin: pg.Client, template: string): Promise<void> {
  await admin.query(`CREATE DATABASE ${template}`);
  const target = new URL(process.env.DATABASE_DIRECT_URL ?? process.env.DATABASE_URL!);
  target.pathname = `/${template}`;
  const db = await openDb({
    databaseUrl: target.toString(),
    dataDir: '',
    statementTimeoutMs: 0,
    connectTimeoutMs: 10_000,
    poolSize: 1,
  });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
}
