/**
 * A database failure, labelled with the name of the query that failed so logs say which one.
 * `sqlState` is PostgreSQL's five-character error code when the server (or PGlite) gave one;
 * `unavailable` is set when the database could not be reached at all.
 */
export class DbError extends Error {
  readonly sqlState: string | undefined;
  readonly constraint: string | undefined;
  readonly queryName: string;
  readonly unavailable: boolean;

  constructor(cause: unknown, queryName: string) {
    const source = (cause ?? {}) as { message?: string; code?: string; constraint?: string };
    super(`${queryName}: ${source.message ?? String(cause)}`, { cause });
    this.name = 'DbError';
    this.queryName = queryName;
    const code = typeof source.code === 'string' ? source.code : undefined;
    this.sqlState = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
    this.constraint = source.constraint;
    this.unavailable = isUnavailable(code, source.message);
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
