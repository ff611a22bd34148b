import type { Config } from '../config.js';
import type { Db, DbOptions } from './db.js';

/** The database the configuration names: PostgreSQL at `databaseUrl`, else PGlite in `dataDir`. */
export async function openDb(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) {
    const { openPostgres } = await import('./postgres.js');
    return openPostgres(options.databaseUrl, options);
  }
  const { openPglite } = await import('./pglite.js');
  return openPglite(options.dataDir, options);
}

type DbConfig = Pick<
  Config,
  | 'DATABASE_URL'
  | 'DATABASE_DIRECT_URL'
  | 'DATABASE_POOL_MODE'
  | 'DATA_DIR'
  | 'STATEMENT_TIMEOUT_MS'
  | 'DB_CONNECT_TIMEOUT_MS'
>;

/**
 * The configured database without a pooler when there is a way around it (DATABASE_DIRECT_URL),
 * with a pool of `poolSize`: for one-off work that needs a real session (migrating, preparing).
 */
export function openConfiguredDb(config: DbConfig, poolSize = 1): Promise<Db> {
  return openDb({ ...directDbOptions(config), poolSize });
}

/**
 * Migrations take a lock and change the schema in one long transaction: they go to PostgreSQL
 * itself when DATABASE_DIRECT_URL is set (a pooler may cut a long transaction, and a pooler's
 * limits are for requests), else through DATABASE_URL as it is.
 */
function directDbOptions(config: DbConfig): Omit<DbOptions, 'poolSize'> {
  const direct = config.DATABASE_DIRECT_URL;
  return {
    databaseUrl: direct ?? config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    poolMode: direct ? 'session' : config.DATABASE_POOL_MODE,
  };
}
