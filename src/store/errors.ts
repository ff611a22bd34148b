/**
 * What a failed statement means, in the store's words. The rest of the service reads only this:
 * SQLSTATE codes and constraint names stay in this file.
 */
type DbFailure =
  /** Unreachable, shutting down, out of connections, or a statement or lock wait that timed out. */
  | 'unavailable'
  /**
   * A serialization failure, a deadlock, or two new listings' random slugs alike: nothing was
   * written; the same work may be retried.
   */
  | 'retryable'
  /** Another dealer profile has this location code (codes are case-insensitive). */
  | 'location-code-taken'
  /** A dealer profile named as its own parent. */
  | 'dealer-own-parent'
  /** A parent that would make a dealer profile its own ancestor. */
  | 'dealer-cycle'
  /** A parent id that no dealer profile has. */
  | 'dealer-parent-missing'
  /** An active or pending listing without a price. */
  | 'price-when-listed'
  // Start-up: connecting to the database.
  | 'database-missing'
  | 'authentication-failed'
  | 'permission-denied'
  | 'connection-refused'
  | 'host-unknown'
  | 'connect-timeout'
  | 'other';

/** Broken constraints by name (migrations/): what each means. */
const CONSTRAINTS: Record<string, DbFailure> = {
  dealer_profiles_location_code_key: 'location-code-taken',
  dealer_profiles_check: 'dealer-own-parent',
  dealer_profiles_no_cycle: 'dealer-cycle',
  dealer_profiles_parent_id_fkey: 'dealer-parent-missing',
  listings_price_when_listed: 'price-when-listed',
  // A new listing's slug met another's: its random suffix (about 41 bits) is drawn again when the
  // write is retried, where a 500 failed the whole batch (found by review, 2026-11-30).
  listings_slug_key: 'retryable',
};

/** SQLSTATE codes and network error codes that mean the same whatever the statement. */
const CODES: Record<string, DbFailure> = {
  '57014': 'unavailable', // statement timeout or cancel: overloaded, or a query ran away
  '55P03': 'unavailable', // lock not available (lock_timeout)
  '53300': 'unavailable', // too many connections
  // The server ended a transaction that sat idle (or ran) past its limit, and the session with
  // it: nothing of it was applied. A service stalled that long (a loaded host) answers 503 and
  // the client retries, as for a statement timeout.
  '25P03': 'unavailable', // idle_in_transaction_session_timeout
  '25P04': 'unavailable', // transaction_timeout (PostgreSQL 17)
  '40001': 'retryable',
  '40P01': 'retryable',
  '3D000': 'database-missing',
  '28P01': 'authentication-failed',
  '28000': 'authentication-failed',
  '42501': 'permission-denied',
  ECONNREFUSED: 'connection-refused',
  ENOTFOUND: 'host-unknown',
  EAI_AGAIN: 'host-unknown',
  ETIMEDOUT: 'connect-timeout',
};

/** The one reading of a driver error: by constraint first, then by code, then by message. */
export function classifyDbError(
  code: string | undefined,
  constraint: string | undefined,
  message = '',
): DbFailure {
  const byConstraint = constraint ? CONSTRAINTS[constraint] : undefined;
  if (byConstraint) return byConstraint;
  const byCode = code ? CODES[code] : undefined;
  if (byCode) return byCode;
  return isUnavailable(code, message) ? 'unavailable' : 'other';
}

/**
 * A database failure, labelled with the name of the query that failed so logs say which one.
 * `failure` is what it means (see DbFailure); `sqlState` is PostgreSQL's five-character code, kept
 * for logs only.
 */
export class DbError extends Error {
  readonly sqlState: string | undefined;
  readonly queryName: string;
  readonly failure: DbFailure;

  constructor(cause: unknown, queryName: string) {
    const source = (cause ?? {}) as { message?: string; code?: string; constraint?: string };
    super(`${queryName}: ${source.message ?? String(cause)}`, { cause });
    this.name = 'DbError';
    this.queryName = queryName;
    const code = typeof source.code === 'string' ? source.code : undefined;
    this.sqlState = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
    this.failure = classifyDbError(code, source.constraint, source.message);
  }

  /** The database could not do the work now (for the client: 503, retry shortly). */
  get unavailable(): boolean {
    return ['unavailable', 'connection-refused', 'connect-timeout', 'host-unknown'].includes(this.failure);
  }

  /**
   * The database refused the data of the statement itself (a data exception or a broken
   * constraint: SQLSTATE classes 22 and 23), not the work as such: the same data will be refused
   * again, while other data may pass.
   */
  get refusedData(): boolean {
    return this.sqlState !== undefined && /^2[23]/.test(this.sqlState);
  }
}

/**
 * What pg and its pool report only by message: no connection within the timeout, a connection
 * that ended, and (the last one) a statement on a pooled connection that died earlier in the same
 * transaction.
 */
const POOL_FAILURE =
  /timeout exceeded when trying to connect|Connection terminated|connection is closed|Client has encountered a connection error/i;

// Class 08 = connection exception, 57P0x = server shutting down / starting up, 53300 = too many
// connections; node errors are network failures; pg's pool reports a timeout only by its message.
function isUnavailable(code: string | undefined, message: string | undefined): boolean {
  if (code && (code.startsWith('08') || /^57P0[1-3]$/.test(code) || code === '53300')) return true;
  if (code && /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND|AI_AGAIN)$/.test(code))
    return true;
  return POOL_FAILURE.test(message ?? '');
}

/**
 * Wraps an error that came from the database driver into a DbError; anything else (an error our
 * own code threw inside a transaction, such as a ProblemError) passes through untouched.
 */
export function labelDbError(error: unknown, queryName: string): unknown {
  if (error instanceof DbError || !(error instanceof Error)) return error;
  const source = error as Error & { severity?: unknown; code?: unknown };
  const fromServer = typeof source.severity === 'string';
  const fromNetwork = typeof source.code === 'string' && /^E[A-Z_]+$/.test(source.code);
  const fromPool = POOL_FAILURE.test(source.message);
  return fromServer || fromNetwork || fromPool ? new DbError(error, queryName) : error;
}

/** A bounded transaction ran past its limit and was rolled back (see Db.transaction). */
export class TransactionTimeoutError extends Error {
  constructor(
    readonly elapsedMs: number,
    readonly maxMs: number,
  ) {
    super(`transaction took ${Math.round(elapsedMs)} ms, over its ${maxMs} ms limit; rolled back`);
    this.name = 'TransactionTimeoutError';
  }
}

/** Throws when a transaction started at `startedAt` (performance.now()) is past `maxMs`. */
export function assertWithin(startedAt: number, maxMs: number | undefined): void {
  if (maxMs === undefined) return;
  const elapsed = performance.now() - startedAt;
  if (elapsed > maxMs) throw new TransactionTimeoutError(elapsed, maxMs);
}

/**
 * PostgreSQL answers the COMMIT of a transaction in which a statement failed (its error caught
 * and not rethrown) with ROLLBACK, not an error: everything the transaction wrote is gone, which
 * must not pass for a success. Both databases' transactions throw this instead.
 */
export function rolledBackAtCommit(): Error {
  const error = new Error('The transaction was rolled back at COMMIT: a statement in it had failed');
  error.name = 'RolledBackAtCommitError';
  return error;
}
