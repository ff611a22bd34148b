/**
 * The one small database interface the rest of the code sees. Two implementations: node-postgres
 * (a pool against a real PostgreSQL server) and PGlite (embedded PostgreSQL in DATA_DIR).
 * Both speak the same SQL; the migrations and every query are shared.
 */
export interface Queryable {
  /** Runs one parameterised statement. `name` labels it in logs and errors. */
  query<T = Record<string, unknown>>(name: string, sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(name: string, sql: string): Promise<void>;
}

/**
 * What a read returns of each row: what `columns` selects, read by `read`. Stores read their own
 * shape by default; the API may ask for its JSON built by the database instead.
 */
export interface Projection<T> {
  columns: string;
  read: (row: Record<string, unknown>) => T;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. With
   * `maxMs`, a transaction that has run longer than that by the time it would commit is rolled
   * back instead (TransactionTimeoutError): sync cursors rely on writes being bounded in time.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Connection-pool figures for metrics (PostgreSQL only). */
  poolStats?(): PoolStats;
  /** Checks that the database answers; throws otherwise. */
  ping(): Promise<void>;
  /**
   * Listens on a notification channel (PostgreSQL LISTEN: notifications from every process on
   * the database). Resolves at once, live or not; returns the function that stops listening.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface PoolStats {
  total: number;
  idle: number;
  /** Requests queued for a connection. */
  waiting: number;
}

export interface TransactionOptions {
  maxMs?: number;
}

export interface DbOptions {
  /** PostgreSQL connection string; unset means the embedded database. */
  databaseUrl?: string | undefined;
  dataDir: string;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  poolSize: number;
}

/** What a listener is told: each notification, and whether it may have missed some. */
export interface ListenHandlers {
  /** A notification arrived (after the transaction that sent it committed). */
  onNotify(): void;
  /**
   * false: notifications may be missed from now on (the listening connection is gone); true:
   * listening (again). Whoever relies on notifications trusts nothing it kept while not live.
   */
  onLive(live: boolean): void;
}
