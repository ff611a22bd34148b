import pg from 'pg';

import type { Queryable } from './db.js';
import { labelDbError } from './errors.js';

/** pg's own serialization of a parameter, what it does at bind (pg.utils; its typings omit it). */
export const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils;

/*
 * How the service's statements reach PostgreSQL: which are prepared (only where the connection is
 * a real session), the timeouts set per session or per transaction, and a single statement bounded
 * in one round trip (DATABASE_POOL_MODE, docs/operations.md "Behind a connection pooler").
 */

/**
 * The statements of a listing write (store/listings/writes.ts), kept prepared on both databases:
 * each text is fixed, and the insert's and update's carry the read model's expressions, several
 * kilobytes of SQL that took longer to parse than the row took to write (docs/benchmarks.md,
 * "The cost of a write").
 */
export const PREPARED_WRITES: ReadonlySet<string> = new Set([
  'LockListings',
  'FindListings',
  'ReadListingByReference',
  'InsertListings',
  'UpdateListings',
  'SetListingStatus',
]);

/**
 * Statements kept prepared on each connection (parsed once per connection, not per request; still
 * planned for their values: sessionSettings). The listing page (which carries its total:
 * store/listings/reads.ts) and the count alone (asked when a page has no rows): their text is the
 * same per filter shape, and parsing and planning were a fifth of the page's database time when
 * the page built its JSON. And a listing write's. Not the others: a generic plan chosen for the
 * dealer-subtree queries was slower for large scopes than a plan for the values at hand
 * (docs/benchmarks.md).
 */
const PREPARED = new Set(['ListListings', 'CountListingsFromCounters', ...PREPARED_WRITES]);
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

/**
 * A statement as the service sends it: prepared (named) or not. Named statements live on a server
 * connection, so they are only used where the connection is known to be one session for as long
 * as the client holds it (`prepare`: DATABASE_POOL_MODE=session). Behind a pooler in transaction
 * mode, the next transaction of the same client may run on another server connection (where the
 * name is unknown) and another client's on this one (where it already exists). The benchmark
 * replays the same.
 */
export function statementConfig(
  name: string,
  sql: string,
  params: readonly unknown[],
  prepare = true,
): pg.QueryConfig {
  const prepared = prepare && PREPARED.has(name) ? preparedName(name, sql) : undefined;
  return { ...(prepared ? { name: prepared } : {}), text: sql, values: params as unknown[] };
}

/**
 * Settings of every service connection (the benchmark's replay uses them too). Only
 * application_name travels as a startup parameter: it is the one of ours a default PgBouncer
 * passes on; it refuses any other (`unsupported startup parameter`) unless told to ignore it, and
 * an ignored one is a promise silently broken. The rest is set where every pooler passes it on
 * (sessionSettings, localSettings).
 */
export const CONNECTION_OPTIONS = { application_name: 'forecourt' };

/**
 * Set once on a connection that is a session of its own (direct, or a pooler in session mode),
 * before its first statement. plan_cache_mode: prepared statements (PREPARED) are still planned
 * for their values every time; a generic plan, which PostgreSQL may otherwise switch to after
 * five runs, took 29 ms instead of 2 for a global page at 1M listings and 800 ms instead of 8 for
 * all statuses (docs/benchmarks.md).
 */
export function sessionSettings(statementTimeoutMs: number): string {
  return [
    // Bounds every statement server-side, so a runaway query cannot hold a connection forever.
    `SET statement_timeout = ${Math.ceil(statementTimeoutMs)}`,
    // A transaction left open by a crashed handler must not hold locks indefinitely.
    `SET idle_in_transaction_session_timeout = ${Math.ceil(statementTimeoutMs * 2)}`,
    'SET plan_cache_mode = force_custom_plan',
    JIT_OFF,
  ].join('; ');
}

/**
 * No JIT compilation on the service's statements, in any mode. PostgreSQL compiles a plan whose
 * estimated cost passes jit_above_cost (100,000 by default), and a listing insert's estimate
 * does: its source is a JSON array PostgreSQL takes for 100 rows, each with the read model's
 * image subqueries. So with `jit = on` (the default where PostgreSQL is built with LLVM, as
 * Debian's is) every single PUT of a new listing compiled about 80 functions first: 88 ms a PUT,
 * 79 of them compiling, against 3.3 ms without (bench/write-statements.ts --time 200, one after
 * another). The service's statements are short OLTP; none gains from JIT.
 */
const JIT_OFF = 'SET jit = off';

/**
 * Sent with BEGIN, in the same message (no extra round trip), in both modes: SET LOCAL lasts until
 * the transaction ends, which is exactly what a transaction-mode pooler keeps together, so the
 * bound holds whatever sits between us and PostgreSQL. `genericPlans`: the transaction's prepared
 * statements, and the statements of the triggers and foreign-key checks they fire, may run one
 * plan made for any values once PostgreSQL finds it as good (Db.transaction's option).
 */
export function localSettings(statementTimeoutMs: number, genericPlans = false): string {
  return [
    'BEGIN',
    `SET LOCAL statement_timeout = ${Math.ceil(statementTimeoutMs)}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${Math.ceil(statementTimeoutMs * 2)}`,
    // Again here: behind a transaction-mode pooler the session's settings are never sent.
    'SET LOCAL jit = off',
    ...(genericPlans ? ['SET LOCAL plan_cache_mode = auto'] : []),
  ].join('; ');
}

/** The messages of the extended protocol that boundedStatement adds (pg's Connection sends them). */
interface WireConnection {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[] }): void;
  execute(message: { portal: string; rows: number | undefined }): void;
  sync(): void;
}

/** A pg.Query with the two steps of pg 8's lib/query.js that boundedStatement extends. */
type QueryInternals = pg.Query & {
  portal: string;
  prepare(connection: WireConnection): void;
  _getRows(connection: WireConnection, rows: number | undefined): void;
};

/**
 * One statement outside a transaction, with its own statement_timeout (and no JIT), in ONE round
 * trip, through any pooler: `SET statement_timeout`, `SET jit = off`, the statement and the two
 * RESETs, each parsed, bound and executed, then a single Sync. Up to that Sync the five are one
 * implicit transaction, which a transaction-mode pooler keeps on one server connection, and
 * PostgreSQL arms the timeout afresh for each Execute, so the statement runs under the values just
 * set. The RESETs hand the server connection back as it was found; when the statement fails, the
 * implicit transaction aborts, which undoes the SETs as well. Not `SET LOCAL`: outside an explicit
 * transaction block it logs a warning, a line per statement. Not a transaction of its own (BEGIN +
 * SET LOCAL, the statement, COMMIT): two more round trips, measured in docs/benchmarks.md. Not a
 * multi-statement query: it takes no parameters.
 */
export function boundedStatement(
  client: pg.PoolClient,
  config: pg.QueryConfig,
  timeoutMs: number,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    // 'extended': a statement without parameters would otherwise go as a simple query, without
    // the messages added here.
    // The values serialized before anything is sent: a value pg cannot bind (a BigInt) then fails
    // here, not after the SET went out, when pg would end the exchange with a Sync that keeps the
    // SET on the server connection for the pooler's next client (and never sends the RESET).
    const values = (config.values ?? []).map((value) => prepareValue(value));
    const extended = { ...config, values, queryMode: 'extended' } as pg.QueryConfig;
    const query = new pg.Query(extended, (error, results) => {
      if (error) reject(error);
      // Five results: the two SETs', the statement's, the two RESETs'.
      else resolve((results as unknown as pg.QueryResult[])[2]!);
    }) as QueryInternals;
    const unnamed = (connection: WireConnection, text: string) => {
      connection.parse({ text, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.execute({ portal: '', rows: undefined });
    };
    const prepare = query.prepare;
    query.prepare = function (connection) {
      unnamed(connection, `SET statement_timeout = ${Math.ceil(timeoutMs)}`);
      unnamed(connection, JIT_OFF);
      prepare.call(this, connection);
    };
    query._getRows = function (connection, rows) {
      connection.execute({ portal: this.portal, rows });
      unnamed(connection, 'RESET statement_timeout');
      unnamed(connection, 'RESET jit');
      connection.sync();
    };
    client.query(query);
  });
}

/** A client checked out of the pool (a connection it lost is noted by the pool's listener: postgres.ts). */
export interface Held {
  client: pg.PoolClient;
  /** Its session settings failed or it could not even roll back: drop it rather than reuse it. */
  broken: boolean;
  release(): void;
}

/** How a Queryable reaches the server: a statement with parameters, and a script without. */
interface Runner {
  statement(config: pg.QueryConfig): Promise<pg.QueryResult>;
  script(sql: string): Promise<unknown>;
}

/**
 * A named statement that the server already has (42P05) or does not have (26000) although this
 * client prepared it (or not) on what it took for its own session: the sign of a transaction-mode
 * pooler configured as a session (the start refuses that when it can tell: postgres-sessions.ts).
 * The log line of the 500 then says what to change, once: the hint goes on the DbError only, not
 * on the driver's error, which the log also writes (as the DbError's cause).
 */
function labelled(error: unknown, name: string, prepare: boolean): unknown {
  const labelledError = labelDbError(error, name);
  const code = (error as { code?: unknown } | undefined)?.code;
  if (prepare && (code === '42P05' || code === '26000') && labelledError instanceof Error)
    labelledError.message +=
      ' (DATABASE_URL behaves like a pooler in transaction mode: set DATABASE_POOL_MODE=transaction)';
  return labelledError;
}

export function queryable(runner: Runner, prepare: boolean): Queryable {
  return {
    async query<T>(name: string, sql: string, params: readonly unknown[] = []) {
      try {
        const result = await runner.statement(statementConfig(name, sql, params, prepare));
        return result.rows as T[];
      } catch (error) {
        throw labelled(error, name, prepare);
      }
    },
    async exec(name: string, sql: string) {
      try {
        await runner.script(sql);
      } catch (error) {
        throw labelDbError(error, name);
      }
    },
  };
}
