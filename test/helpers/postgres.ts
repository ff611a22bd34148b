import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import pg from 'pg';

/**
 * The machine's PostgreSQL server, for tests of what only a server can show: several service
 * processes on one database, locks held by another session, the server stopping under us.
 * Those tests run when DATABASE_URL is set (the PostgreSQL pass of `.ci/run`).
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

const cluster = () => readdirSync('/etc/postgresql')[0]!;

/** Stops and starts the machine's PostgreSQL server (pg_ctlcluster, as .ci/run starts it). */
export const postgresServer = {
  stop(mode: 'fast' | 'immediate' = 'fast') {
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', cluster(), 'main', 'stop', '-m', mode], {
      stdio: 'ignore',
    });
  },
  start() {
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', cluster(), 'main', 'start'], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 60; i++) {
      try {
        execFileSync('pg_isready', ['-q', '-h', '127.0.0.1', '-p', '5432']);
        return;
      } catch {
        execFileSync('sleep', ['0.25']);
      }
    }
    throw new Error('PostgreSQL did not come back');
  },
  isRunning(): boolean {
    try {
      execFileSync('pg_isready', ['-q', '-h', '127.0.0.1', '-p', '5432']);
      return true;
    } catch {
      return false;
    }
  },
};
