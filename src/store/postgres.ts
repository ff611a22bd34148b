import pg from 'pg';
import type { Db, DbOptions } from './db.js';
import { assertWithin, labelDbError, rolledBackAtCommit } from './errors.js';
import { listenerState, openListen, PROVEN } from './postgres-listen.js';
import {
  boundedStatement,
  CONNECTION_OPTIONS,
  type Held,
  localSettings,
  queryable,
  sessionSettings,
  statementConfig,
} from './postgres-statements.js';

// numeric (prices, CO2) arrives as a string by default to avoid float surprises; our numerics have
// at most 2 decimals and stay far below 2^53, so a JS number is exact enough and what the API returns.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));
// int8 (count(*)) likewise: counts here never approach 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
// `date` stays a 'YYYY-MM-DD' string: turning it into a local-midnight Date shifts it by the zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

// What the benchmark's replay of the service's statements uses (bench/lib/db-limit.ts).
export { CONNECTION_OPTIONS, sessionSettings, statementConfig };

export async function openPostgres(url: string, options: DbOptions): Promise<Db> {
  const mode = options.poolMode ?? 'session';
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    ...CONNECTION_OPTIONS,
  });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => {});
  // And neither may a client we hold. Each has an error listener of ours from its first connection
  // to its end: the pool removes its own when it hands a client out, and a listener added when
  // checkout() resumes came too late for an error read in the same chunk as a new connection's
  // ReadyForQuery (pg_terminate_backend right after connecting: an 'error' nobody listened to
  // ended the process; seen in CI's crash test, replayed in test/postgres-operations.test.ts).
  // The statement in flight fails by itself; the listener only notes that the connection is gone.
  const lost = new WeakSet<pg.PoolClient>();
  pool.on('connect', (client) => {
    client.on('error', () => lost.add(client));
  });
  /** Session mode: the connections whose session settings are made. */
  const settled = new WeakSet<pg.PoolClient>();

  const checkout = async (): Promise<Held> => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw labelDbError(error, 'connect');
    }
    const held: Held = {
      client,
      broken: false,
      release() {
        client.release(held.broken || lost.has(client));
      },
    };
    if (mode === 'session' && !settled.has(client)) {
      // One round trip per connection, not per statement.
      try {
        await client.query(sessionSettings(options.statementTimeoutMs));
        settled.add(client);
      } catch (error) {
        held.broken = true;
        held.release();
        throw labelDbError(error, 'SessionSettings');
      }
    }
    return held;
  };

  /**
   * Runs `fn` on a client in a transaction: BEGIN and the SET LOCALs (`settings`: localSettings, its
   * bound above all) in one message, `fn`, then COMMIT; ROLLBACK when anything throws.
   */
  const inTransaction = async <T>(
    settings: string,
    fn: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> => {
    const held = await checkout();
    try {
      try {
        await held.client.query(settings);
      } catch (error) {
        throw labelDbError(error, 'Begin');
      }
      const result = await fn(held.client);
      let commit: pg.QueryResult;
      try {
        commit = await held.client.query('COMMIT');
      } catch (error) {
        throw labelDbError(error, 'Commit');
      }
      if (commit.command === 'ROLLBACK') throw rolledBackAtCommit();
      return result;
    } catch (error) {
      await held.client.query('ROLLBACK').catch(() => {
        held.broken = true;
      });
      throw error;
    } finally {
      held.release();
    }
  };

  const withClient = async <T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const held = await checkout();
    try {
      return await fn(held.client);
    } finally {
      held.release();
    }
  };

  /**
   * Statements outside a transaction. In session mode they run as they are, under the session's
   * statement_timeout. In transaction mode a session setting would not hold (the next statement
   * may run on another server connection) and would leak to the pooler's other clients, so each
   * statement carries its own timeout in the same round trip (boundedStatement); a script (no
   * parameters, rare: never on a request's path) runs in a transaction of its own.
   */
  const root = queryable(
    mode === 'session'
      ? {
          statement: (config) => withClient((client) => client.query(config)),
          script: (sql) => withClient((client) => client.query(sql)),
        }
      : {
          statement: (config) =>
            withClient((client) => boundedStatement(client, config, options.statementTimeoutMs)),
          script: (sql) =>
            inTransaction(localSettings(options.statementTimeoutMs), (client) => client.query(sql)),
        },
    mode === 'session',
  );
  const listener = listenerState();
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(fn, txOptions = {}) {
      const startedAt = performance.now();
      // A bounded transaction also bounds each of its statements by the same limit.
      const settings = localSettings(txOptions.maxMs ?? options.statementTimeoutMs, txOptions.genericPlans);
      return inTransaction(settings, async (client) => {
        // A handle used after its transaction ended is refused: its client is back in the pool,
        // where the statement would run in whatever the next holder is doing.
        let open = true;
        const held = <R>(run: () => Promise<R>) =>
          open ? run() : Promise.reject(new Error('Transaction is closed'));
        const tx = queryable(
          {
            statement: (config) => held(() => client.query(config)),
            script: (sql) => held(() => client.query(sql)),
          },
          mode === 'session',
        );
        try {
          const result = await fn(tx);
          assertWithin(startedAt, txOptions.maxMs);
          return result;
        } finally {
          open = false;
        }
      });
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async ping() {
      await root.query('Ping', 'SELECT 1');
    },
    async reachable() {
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: options.connectTimeoutMs,
        ...CONNECTION_OPTIONS,
      });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT 1');
      } finally {
        await client.end().catch(() => {});
      }
    },
    async listen(channel, events) {
      const send = (payload: string) =>
        root.query('ProveListening', 'SELECT pg_notify($1, $2)', [channel, payload]).then(() => undefined);
      const lost = (detail: string) => {
        listener.set(false, detail);
        events.onLost(detail);
      };
      const target = options.directUrl ?? url;
      const opened = await openListen(target, options, channel, { ...events, onLost: lost }, send).catch(
        (error: Error) => {
          listener.set(false, error.message);
          throw error;
        },
      );
      listener.set(true, PROVEN);
      return {
        prove: () =>
          opened.prove().catch((error: Error) => {
            listener.set(false, error.message);
            throw error;
          }),
        close: opened.close,
      };
    },
    listening: () => listener.status(),
    async close() {
      await pool.end();
    },
  };
}
