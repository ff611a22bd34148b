import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

/** The advisory lock every instance takes to migrate: one applies, the others wait and find it done. */
const MIGRATION_LOCK = 7270412;

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number.parseInt(file, 10),
      name: file,
      sql: readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/**
 * Applies pending migrations in order and records them, all in one transaction under a
 * transaction-level advisory lock. Concurrent starts of several instances therefore take turns:
 * the first applies every pending migration, the others wait, then find nothing left to do. (One
 * transaction per migration let a second instance slip in between two of them and apply the
 * rest.) A failing migration rolls back the whole batch, so the schema is never left between two
 * versions; PostgreSQL's DDL is transactional, and no migration here needs to run outside a
 * transaction.
 */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<string[]> {
  const appliedAtCreation = db.takeAppliedAtCreation?.() ?? [];
  const applied = await db.transaction(async (tx) => {
    // No statement_timeout here: STATEMENT_TIMEOUT_MS bounds a request's statements, while a
    // migration takes as long as its table is large (an index over a million listings), and an
    // instance waiting for another's migrations waits as long as they run. Cut at the request's
    // bound, either failed the start; on a fresh database even 001 took longer than 300 ms on a
    // busy machine (CI, 2026-11-30). The deploy's own start-up deadline bounds a migration.
    await tx.exec('NoStatementTimeout', 'SET LOCAL statement_timeout = 0');
    await tx.query('LockMigrations', `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    // Under the lock too: two concurrent CREATE TABLE IF NOT EXISTS can both try to create the
    // table and one then fails on a unique violation in the catalog.
    await tx.query(
      'CreateMigrationsTable',
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const rows = await tx.query<{ version: number }>(
      'ListMigrations',
      'SELECT version FROM schema_migrations',
    );
    const done = new Set(rows.map((r) => r.version));
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.exec(`Migration ${migration.name}`, migration.sql);
      await tx.query('RecordMigration', 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.name);
    }
    return applied;
  });
  return [...appliedAtCreation, ...applied];
}

/** True when every known migration has been applied (used by readiness checks). */
export async function pendingMigrations(db: Db, migrations = loadMigrations()): Promise<string[]> {
  const rows = await db.query<{ version: number }>('ListMigrations', 'SELECT version FROM schema_migrations');
  const done = new Set(rows.map((r) => r.version));
  return migrations.filter((m) => !done.has(m.version)).map((m) => m.name);
}
