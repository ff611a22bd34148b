import pg from 'pg';

/**
 * The machine's PostgreSQL server, for tests of what only a server can show: several service
 * processes on one database, locks held by another session. Those tests run when DATABASE_URL is
 * set (the PostgreSQL pass of `.ci/run`). Other files use the server at the same time, so no test
 * stops it: an outage or a crash is shown on a server of the test's own (own-postgres.ts).
 */
export const serverUrl = process.env.DATABASE_URL;
export const skipWithoutPostgres = serverUrl ? false : 'needs PostgreSQL: set DATABASE_URL';

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A new, empty database on the server of DATABASE_URL; drop() removes it. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `fc_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = withDatabase(serverUrl!, 'postgres');
  await run(admin, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(serverUrl!, name),
    drop: async () => {
      await run(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export async function run(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Holds a table lock from another session until release(): the service's queries on it wait. */
export async function lockTable(url: string, table: string, mode = 'ACCESS EXCLUSIVE') {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`BEGIN; LOCK TABLE ${table} IN ${mode} MODE`);
  return {
    async release() {
      await client.query('ROLLBACK').catch(() => {});
      await client.end().catch(() => {});
    },
  };
}

/** Resolves once some session of the service waits on a lock (its request is in flight). */
export async function waitForLockWaiter(url: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const { rows } = await run(
      url,
      `SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name = 'forecourt'`,
    );
    if (rows.length) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no service session waited on the lock');
}
