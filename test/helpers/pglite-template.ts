import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMigrations, migrate } from '../../src/store/migrate.js';
import { openPglite } from '../../src/store/pglite.js';

/**
 * Creating an embedded database (initdb) takes about 4.5 s; copying a created and migrated one
 * takes 0.2 s. A test suite boots the service on a fresh directory dozens of times, so each boot
 * gets a copy of one template, made once per machine for this PGlite release, this way of creating
 * it (src/store/pglite.ts) and these migrations (the key), and shared by every test process. A boot on a copy still runs the migrator, which finds
 * everything applied: what a restarted service does.
 */
function templateKey(): string {
  // The package does not export its package.json: find it above its entry point.
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  const hash = createHash('sha256').update(readFileSync(path.join(dir, 'package.json')));
  // How the service creates an embedded database, too: a change there must not reuse old templates.
  for (const file of ['pglite.ts', 'pglite-create.ts']) {
    hash.update(readFileSync(fileURLToPath(import.meta.resolve(`../../src/store/${file}`))));
  }
  for (const m of loadMigrations()) hash.update(m.name).update(m.sql);
  return hash.digest('hex').slice(0, 16);
}

let ready: Promise<string> | undefined;

async function template(): Promise<string> {
  // npm test keeps each run's temporary files in a directory of its own, removed at the end, and
  // the templates beside it, where the next run finds them (scripts/test.mjs).
  const dir = process.env.FORECOURT_TEST_TEMPLATES ?? os.tmpdir();
  const final = path.join(dir, `forecourt-test-template-${templateKey()}`);
  if (existsSync(path.join(final, 'PG_VERSION'))) return final;
  const scratch = mkdtempSync(path.join(dir, 'forecourt-test-template-building-'));
  try {
    const db = await openPglite(scratch, {
      dataDir: scratch,
      statementTimeoutMs: 0,
      connectTimeoutMs: 0,
      poolSize: 1,
    });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    // Another test process may have finished first: its template is as good as ours.
    try {
      renameSync(path.join(scratch, 'pglite'), final);
    } catch (error) {
      if (!existsSync(path.join(final, 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return final;
}

/** Puts a copy of the template database where the service opens its embedded database. */
export async function seedEmbeddedDb(dataDir: string): Promise<void> {
  ready ??= template();
  const source = await ready;
  cpSync(source, path.join(dataDir, 'pglite'), { recursive: true });
}

/** Whether the test boots use the embedded database (no DATABASE_URL). */
export function embedded(env: Record<string, string>): boolean {
  return !(env.DATABASE_URL ?? process.env.DATABASE_URL);
}
