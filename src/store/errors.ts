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

// Class 08 = connection exception, 57P0x = server shutting down / starting up, 53300 = too many
// connections; node errors are network failures; pg's pool reports a timeout only by its message.
function isUnavailable(code: string | undefined, message: string | undefined): boolean {
  if (code && (code.startsWith('08') || /^57P0[1-3]$/.test(code) || code === '53300')) return true;
  if (code && /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND|AI_AGAIN)$/.test(code))
    return true;
  return /timeout exceeded when trying to connect|Connection terminated|connection is closed/i.test(
    message ?? '',
  );
}

export function labelDbError(error: unknown, queryName: string): unknown {
  if (error instanceof DbError) return error;
  // Errors thrown by our own code inside a transaction pass through untouched.
  if (error instanceof Error && !('code' in error) && !/terminated|connect/i.test(error.message))
    return error;
  return new DbError(error, queryName);
}
