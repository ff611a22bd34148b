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
 * not in the runner itself. A process that runs several files (test/helpers/bundle.ts) gives each
 * a database of its own the same way (`<name>_f<pid>_<n>`).
 */
/** The URLs a test process was started with, before any was pointed at a database of its own. */
const COMPANIONS = ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'PGBOUNCER_URL'] as const;
const SHARED_KEY = 'FORECOURT_TEST_SHARED_URLS';

function sharedUrls(): Partial<Record<(typeof COMPANIONS)[number], string>> {
  const kept = process.env[SHARED_KEY];
  if (kept) return JSON.parse(kept);
  const urls = Object.fromEntries(
    COMPANIONS.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
  );
  process.env[SHARED_KEY] = JSON.stringify(urls);
  return urls;
}

/**
 * A new database on the server of DATABASE_URL, copied from the run's template and named after
 * the shared one (`<name>_<suffix>`), and the environment that points the service at it: the
 * pooler's address and the way around it name it too. {} on the embedded database.
 */
export async function isolatedDatabase(suffix: string): Promise<Record<string, string>> {
  const urls = sharedUrls();
  if (!urls.DATABASE_URL) return {};
  const base = new URL(urls.DATABASE_URL).pathname.slice(1);
  const name = `${base}_${suffix}`;
  const admin = new URL(urls.DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const template = `${base}_template`;
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
  const env: Record<string, string> = {};
  for (const companion of COMPANIONS) {
    const value = urls[companion];
    if (!value) continue;
    const other = new URL(value);
    other.pathname = `/${name}`;
    env[companion] = other.toString();
  }
  return env;
}

if (process.env.DATABASE_URL && process.env.NODE_TEST_CONTEXT) {
  Object.assign(process.env, await isolatedDatabase(`f${process.pid}`));
}

/**
 * The run's migrated database, migrated around a pooler when there is a way (as the service
 * migrates: store/open.ts). Closed before any copy: PostgreSQL copies no database in use.
 */
async function createTemplate(admin: pg.Client, template: string): Promise<void> {
  await admin.query(`CREATE DATABASE ${template}`);
  const urls = sharedUrls();
  const target = new URL(urls.DATABASE_DIRECT_URL ?? urls.DATABASE_URL!);
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
