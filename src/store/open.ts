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
