import pg from 'pg';

/**
 * Preloaded (`--import`) by scripts/test.mjs when test files run side by side on PostgreSQL: each
 * test file's process gets a database of its own on the server of DATABASE_URL, named after the
 * shared one (`<name>_f<pid>`), and DATABASE_URL is pointed at it before any test code reads it.
 * Files then never see each other's rows: a global partner's list, a count, a sync walk are the
 * file's own, as when files ran one at a time. scripts/test.mjs drops these databases at the end.
 *
 * DATABASE_DIRECT_URL and PGBOUNCER_URL, when set, are pointed at it too.
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
    await client.query(`CREATE DATABASE ${name}`);
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
