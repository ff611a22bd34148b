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

/** The configured database with a pool of `poolSize`: for one-off work (migrating, preparing). */
export function openConfiguredDb(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'STATEMENT_TIMEOUT_MS' | 'DB_CONNECT_TIMEOUT_MS'>,
  poolSize = 1,
): Promise<Db> {
  return openDb({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    poolSize,
  });
}
