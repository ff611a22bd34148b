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
  /** What a listing read joins to `l` for these columns; LISTING_JOINS (partner, dealer, parent) by default. */
  joins?: string;
  /** A new object for each row, each time: callers may complete it in place (domain/locations.ts). */
  read: (row: Record<string, unknown>) => T;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws, and
   * refused (errors.ts, rolledBackAtCommit) when PostgreSQL rolled it back at COMMIT instead. With
   * `maxMs`, a transaction that has run longer than that by the time it would commit is rolled
   * back instead (TransactionTimeoutError): sync cursors rely on writes being bounded in time.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Connection-pool figures for metrics (PostgreSQL only). */
  poolStats?(): PoolStats;
  /** Checks that the database answers; throws otherwise. */
  ping(): Promise<void>;
  /**
   * Checks that the database answers a connection of its own, outside the pool: an outage is told
   * from a busy pool (where `ping` would wait for a free connection like every request).
   */
  reachable(): Promise<void>;
  /**
   * Listens on a notification channel (PostgreSQL LISTEN: notifications from every process on
   * the database), on a direct connection (DbOptions.directUrl) when there is one. Resolves once
   * notifications are proven to arrive there; rejects, saying why, when they are not. Keeping it
   * proven, and listening again when it is lost, is background/listen.ts's.
   */
  listen(channel: string, events: ListenEvents): Promise<Listening>;
  /** What the listening connections did last (whether notifications are proven to arrive, and why not). */
  listening(): ListenStatus;
  close(): Promise<void>;
  /**
   * The migrations already applied when this connection opened a database it had to create
   * (PGlite does that in a process of its own, store/pglite.ts), once: `migrate` reports them as
   * applied by itself, so a first start says what it always said.
   */
  takeAppliedAtCreation?(): string[];
}

export interface PoolStats {
  total: number;
  idle: number;
  /** Requests queued for a connection. */
  waiting: number;
}

interface TransactionOptions {
  maxMs?: number;
  /**
   * Its statements, and the triggers and foreign-key checks they fire, may run one plan made for
   * any values once PostgreSQL finds it as good (plan_cache_mode auto), rather than a plan for
   * their values every time, as the service's connections otherwise ask (store/postgres.ts): for
   * listing writes, whose plans do not depend on their values and whose statements are large
   * (docs/benchmarks.md, "The cost of a write"). The embedded database always may.
   */
  genericPlans?: boolean;
}

export interface DbOptions {
  /** PostgreSQL connection string; unset means the embedded database. */
  databaseUrl?: string | undefined;
  dataDir: string;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  poolSize: number;
  /**
   * What `databaseUrl` leads to. `session` (default): each connection is one session while the
   * client holds it (PostgreSQL itself, or a pooler in session mode), so settings are made once
   * per connection and the list page runs as a prepared statement. `transaction`: a pooler in
   * transaction mode (PgBouncer's `pool_mode = transaction`, managed "pooled" endpoints), where
   * only a transaction keeps its server connection: nothing is prepared by name and every
   * statement runs in a transaction that carries its own timeouts.
   */
  poolMode?: PoolMode | undefined;
  /** A direct connection to the same database, for what needs a real session (LISTEN). */
  directUrl?: string | undefined;
}

export type PoolMode = 'session' | 'transaction';

/** Whether notifications are proven to arrive, and what the proof (or its absence) was. */
export interface ListenStatus {
  live: boolean;
  detail: string;
}

/** What a listening connection tells. */
export interface ListenEvents {
  /** A notification arrived (after the transaction that sent it committed). */
  onNotify(): void;
  /**
   * The connection is gone: notifications may be missed from now on. Said once, and never for a
   * connection closed by `close()` or by a failed `prove()` (which rejects instead).
   */
  onLost(detail: string): void;
}

/** A listening connection, proven when it was handed over. */
export interface Listening {
  /** Proves again that notifications arrive; rejects, saying why, when they may not (and closes it). */
  prove(): Promise<void>;
  close(): Promise<void>;
}
