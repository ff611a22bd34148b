import pg from 'pg';
import type { Db, Queryable } from '../../src/store/db.js';
import { CONNECTION_OPTIONS, sessionSettings, statementConfig } from '../../src/store/postgres.js';
import { type Measured, summarize } from './load.js';

export interface Statement {
  name: string;
  sql: string;
  params: readonly unknown[];
}

/**
 * A Db that records every statement it runs: wrapped around the real one, it yields exactly the
 * SQL the service sends for a request, so the same statements can be replayed on the bare driver.
 */
export function recording(db: Db): { db: Db; take(): Statement[] } {
  let log: Statement[] = [];
  const record = (q: Queryable): Queryable => ({
    query: (name, sql, params = []) => {
      log.push({ name, sql, params });
      return q.query(name, sql, params);
    },
    exec: (name, sql) => q.exec(name, sql),
  });
  const wrapped: Db = {
    ...db,
    kind: db.kind,
    ...record(db),
    transaction: (fn, options) => db.transaction((tx) => fn(record(tx)), options),
    ping: () => db.ping(),
    close: () => db.close(),
  };
  return {
    db: wrapped,
    take() {
      const taken = log;
      log = [];
      return taken;
    },
  };
}

/**
 * The database limit of a scenario: its statements, one request's worth after another, on
 * `connections` concurrent pg clients for `durationS` seconds; no HTTP, no app code.
 */
export async function replay(
  databaseUrl: string,
  statements: Statement[],
  connections: number,
  durationS: number,
): Promise<Measured> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: connections, ...CONNECTION_OPTIONS });
  // The service's session settings (plan_cache_mode above all), queued before the first statement.
  // Errors of a lost connection fail their statement; heard here, they do not end the run.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    client.query(sessionSettings(10_000)).catch(() => {});
  });
  // As the service's pg adapter sends them: the same prepared and unnamed statements.
  const prepared = statements.map((s) => statementConfig(s.name, s.sql, s.params));
  const latencies: number[] = [];
  let errors = 0;
  const until = performance.now() + durationS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = await pool.connect();
      try {
        while (performance.now() < until) {
          const t = performance.now();
          try {
            for (const q of prepared) await client.query(q);
            latencies.push(performance.now() - t);
          } catch {
            errors++;
          }
        }
      } finally {
        client.release();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.end();
  return summarize(latencies, seconds, errors);
}
