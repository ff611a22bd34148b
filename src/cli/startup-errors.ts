import { ConfigError } from '../config.js';
import { DbError } from '../store/errors.js';
import { DataDirLockedError } from '../store/lockfile.js';

/**
 * A start-up failure as the one line an operator needs: what failed and what to change. A stack
 * trace helps the developer of Forecourt, not the person starting it; unexpected errors still get
 * their message (and the stack with LOG_LEVEL=debug).
 */
export function startupFailureLine(error: unknown, env: Record<string, string | undefined>): string {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) return error.message;
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
  const cause = (error instanceof DbError ? error.cause : error) as NodeJS.ErrnoException | undefined;
  const db = env.DATABASE_URL ? describeDatabase(env.DATABASE_URL) : 'the embedded database';
  switch (error instanceof DbError ? error.failure : e?.code) {
    case 'database-missing':
      return `${db}: the database does not exist. Create it (e.g. createdb) or fix DATABASE_URL.`;
    case 'authentication-failed':
      return `${db}: authentication failed for its user. Fix the user or password in DATABASE_URL.`;
    case 'permission-denied':
      return `${db}: permission denied (${cause?.message ?? 'insufficient privilege'}). Grant the user rights on the database, or use another.`;
    case 'connection-refused':
      return `${db}: connection refused. Is PostgreSQL running and listening there? Check the host and port in DATABASE_URL.`;
    case 'host-unknown':
      return `${db}: the host name does not resolve. Fix the host in DATABASE_URL.`;
    case 'connect-timeout':
      return `${db}: no answer within DB_CONNECT_TIMEOUT_MS. Check the host, port and firewall.`;
    case 'EADDRINUSE':
      return `port ${e.port ?? env.PORT ?? 8443} on ${e.address ?? env.HOST ?? '0.0.0.0'} is already in use. Stop the other process or set PORT.`;
    case 'EACCES':
      if (e.syscall === 'listen')
        return `no permission to listen on port ${e.port ?? env.PORT}. Use a port above 1023 (PORT) or grant the capability.`;
      return `no permission to ${e.syscall ?? 'use'} ${e.path ?? 'a file'}. Check DATA_DIR and the TLS file paths, and who owns them.`;
    case 'ENOENT':
      return `${e.path ?? 'a file'} does not exist. Check DATA_DIR, TLS_CERT_FILE and TLS_KEY_FILE.`;
    case 'EROFS':
    case 'ENOTDIR':
    case 'EISDIR':
      return `cannot write ${e.path ?? 'a file'} (${e.code}). Point DATA_DIR at a writable directory.`;
    case 'ERR_OSSL_PEM_NO_START_LINE':
    case 'ERR_OSSL_UNSUPPORTED':
    case 'ERR_OSSL_X509_KEY_VALUES_MISMATCH':
      return `TLS_CERT_FILE / TLS_KEY_FILE: not a matching PEM certificate and private key (${e.message}).`;
    default:
      return error instanceof DbError
        ? `${db}: ${cause?.message ?? error.message}`
        : `start-up failed: ${(error as Error)?.message ?? String(error)}`;
  }
}

/** postgres://user:secret@host:5432/db → "PostgreSQL at host:5432, database db" (no password). */
function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL at ${u.hostname}:${u.port || 5432}, database "${decodeURIComponent(u.pathname.slice(1)) || u.username}"`;
  } catch {
    return 'DATABASE_URL';
  }
}
