import { parseConfig } from '../config.js';
import { migrate } from '../store/migrate.js';
import { openDb } from '../store/open.js';

/** `forecourt migrate`: apply pending migrations to the configured database and report them. */
export async function runMigrate(env: Record<string, string | undefined>): Promise<number> {
  const config = parseConfig(env);
  const db = await openDb({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    poolSize: 1,
  });
  try {
    const applied = await migrate(db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await db.close();
  }
}
