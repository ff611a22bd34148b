import pg from 'pg';
import type { Db, DbOptions, ListenHandlers, Queryable } from './db.js';
import { assertWithin, labelDbError } from './errors.js';

// numeric (prices, CO2) arrives as a string by default to avoid float surprises; our numerics have
// at most 2 decimals and stay far below 2^53, so a JS number is exact enough and what the API returns.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));
// int8 (count(*)) likewise: counts here never approach 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
// `date` stays a 'YYYY-MM-DD' string: turning it into a local-midnight Date shifts it by the zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

/**
 * Statements kept prepared on each connection (parsed and planned once per connection, not per
 * request). Only the listing page and its count: their text is long (the page's JSON projection
 * is ~60 expressions) and the same per filter shape, so planning was a fifth of the page's
 * database time, and their plans do not depend on the values (a LIMIT over an index, per-dealer
 * walks, counter sums). Not the others: a generic plan chosen for the dealer-subtree queries was
 * slower for large scopes than a plan for the values at hand (docs/benchmarks.md).
 */
const PREPARED = new Set(['ListListings', 'CountListingsFromCounters']);
/** SQL text -> its prepared statement's name; a text is a filter shape, so there are few. */
const preparedNames = new Map<string, string>();
/** A bound all the same: past it, new texts run unprepared rather than grow every connection. */
const MAX_PREPARED = 500;
const preparedName = (name: string, sql: string): string | undefined => {
  let named = preparedNames.get(sql);
  if (named === undefined && preparedNames.size < MAX_PREPARED) {
    named = `${name}_${preparedNames.size}`;
    preparedNames.set(sql, named);
  }
  return named;
};

/** A statement as the service sends it: prepared (named) or not. The benchmark replays the same. */
export function statementConfig(name: string, sql: string, params: readonly unknown[]): pg.QueryConfig {
  const prepared = PREPARED.has(name) ? preparedName(name, sql) : undefined;
  return { ...(prepared ? { name: prepared } : {}), text: sql, values: params as unknown[] };
}

/** Settings of every service connection (the benchmark's replay uses them too). */
export const CONNECTION_OPTIONS = {
  application_name: 'forecourt',
  // Prepared statements (PREPARED) are still planned for their values every time: a generic
  // plan, which PostgreSQL may otherwise switch to after five runs, took 29 ms instead of 2 for
  // a global page at 1M listings and 800 ms instead of 8 for all statuses (docs/benchmarks.md).
  options: '-c plan_cache_mode=force_custom_plan',
};

function queryable(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(name: string, sql: string, params: readonly unknown[] = []) {
      try {
        const result = await client.query(statementConfig(name, sql, params));
        return result.rows as T[];
      } catch (error) {
        throw labelDbError(error, name);
      }
    },
    async exec(name: string, sql: string) {
      try {
        await client.query(sql);
      } catch (error) {
        throw labelDbError(error, name);
      }
    },
  };
}

export async function openPostgres(url: string, options: DbOptions): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // Bounds every statement server-side, so a runaway query cannot hold a connection forever.
    statement_timeout: options.statementTimeoutMs,
    // A transaction left open by a crashed handler must not hold locks indefinitely.
    idle_in_transaction_session_timeout: options.statementTimeoutMs * 2,
    ...CONNECTION_OPTIONS,
  });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => {});
  const root = queryable(pool);
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(fn, options = {}) {
      const startedAt = performance.now();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw labelDbError(error, 'connect');
      }
      const tx = queryable(client);
      let broken = false;
      // A checked-out client has no error listener of the pool's. When the server goes away while
      // we hold it (crash, restart, pg_terminate_backend), node-postgres emits 'error' on it, and
      // an 'error' event nobody listens to ends the process (found by test/crash-consistency.test.ts).
      // The statement in flight fails by itself; we only note that the connection is gone.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        // A bounded transaction also bounds each of its statements by the same limit.
        await tx.exec(
          'Begin',
          options.maxMs ? `BEGIN; SET LOCAL statement_timeout = ${Math.ceil(options.maxMs)}` : 'BEGIN',
        );
        const result = await fn(tx);
        assertWithin(startedAt, options.maxMs);
        await tx.exec('Commit', 'COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        client.off('error', onError);
        // A connection that cannot even roll back is dropped, not reused.
        client.release(broken);
      }
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async ping() {
      await root.query('Ping', 'SELECT 1');
    },
    listen: (channel, handlers) => listenOn(url, options, channel, handlers),
    async close() {
      await pool.end();
    },
  };
}

/** How often the listening connection proves it is alive, and how long it may take to. */
const HEARTBEAT_MS = 5000;

/**
 * LISTEN on a connection of its own (a pooled one would be handed to others). When it breaks,
 * the listener is told it is no longer live and the connection is made again, 1 s later at
 * first, then up to every 10 s, until it listens again.
 */
async function listenOn(
  url: string,
  options: DbOptions,
  channel: string,
  handlers: ListenHandlers,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delayMs = 1000;
  let heartbeat: NodeJS.Timeout | undefined;
  const connect = async () => {
    retry = undefined;
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      application_name: 'forecourt-listen',
      keepAlive: true,
      // A connection cut without a word (no FIN) is found by the heartbeat below failing in time.
      query_timeout: HEARTBEAT_MS,
    });
    let lost = false;
    const onLost = () => {
      // Closed by us (shutdown): nothing was lost, nothing to report or retry.
      if (lost || stopped) return;
      lost = true;
      clearInterval(heartbeat);
      handlers.onLive(false);
      next.end().catch(() => {});
      if (!stopped) retry = setTimeout(connect, delayMs).unref();
      delayMs = Math.min(delayMs * 2, 10_000);
    };
    next.on('error', onLost);
    next.on('end', onLost);
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotify();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch {
      onLost();
      return;
    }
    if (stopped) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    delayMs = 1000;
    handlers.onLive(true);
    heartbeat = setInterval(() => {
      next.query('SELECT 1').catch(onLost);
    }, HEARTBEAT_MS).unref();
  };
  // Not live until the first LISTEN succeeds (the caller starts that way): a failure then is
  // reported like any later loss.
  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    clearInterval(heartbeat);
    await client?.end().catch(() => {});
  };
}
