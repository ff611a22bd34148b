import { parseConfig } from '../config.js';
import { migrate } from '../store/migrate.js';
import { openConfiguredDb } from '../store/open.js';

/** `forecourt migrate`: apply pending migrations to the configured database and report them. */
export async function runMigrate(env: Record<string, string | undefined>): Promise<number> {
  const config = parseConfig(env);
  const db = await openConfiguredDb(config);
  try {
    const applied = await migrate(db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await db.close();
  }
}
