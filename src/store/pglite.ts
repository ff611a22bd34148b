import { fork } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParserOptions as Parsers } from '@electric-sql/pglite';
import { types } from '@electric-sql/pglite';
import type { Db, DbOptions } from './db.js';
import { acquireDirLock } from './lockfile.js';
import { pgliteStatements, typeParsers } from './pglite-statements.js';
import { threadWire, type Wire } from './pglite-wire.js';

// Same value shapes as the node-postgres adapter (see postgres.ts), so no caller can tell them apart.
export const OWN_PARSERS = {
  [types.NUMERIC]: (v: string) => Number.parseFloat(v),
  [types.INT8]: (v: string) => Number.parseInt(v, 10),
  [types.DATE]: (v: string) => v,
};

/** What store/pglite-create.ts, the child process, tells this one: the migrations it applied, or why the database was not created. */
export type CreateOutcome = { applied: string[] } | { error: string };
/**
 * The rows an ANALYZE samples (300 × this target) are held in the WebAssembly memory, which a
 * process never gives back: at the default target (100: 30,000 rows) the service's maintenance
 * (store/pglite-maintenance.ts) grew it by 64 MB at 100,000 listings and took 265 ms of the only
 * connection; at 30 (9,000 rows), 18 MB and 60–80 ms. Enough for the few columns the planner
 * needs (migration 013), on a database meant for one process.
 */
const ANALYZE_SAMPLE = ['-c', 'default_statistics_target=30'];
/**
 * PGlite's PostgreSQL keeps 128 MB of shared buffers in the process's WebAssembly memory; an
 * embedded database serves one process and its files sit in the OS page cache as well, so 32 MB
 * does (docs/benchmarks.md: idle RSS and each scenario measured both ways). Start parameters, not
 * postgresqlconf: that option replaces the whole postgresql.conf of the data directory.
 */
const MEMORY = ['-c', 'shared_buffers=32MB', ...ANALYZE_SAMPLE];

/**
 * A new database is created (initdb) and migrated in a child process that ends with it
 * (store/pglite-create.ts). The WebAssembly memory initdb grows to (about 450 MB) is never given
 * back by a running process, and a worker thread was not enough either: the memory the process's
 * allocator kept after the worker ended (its arenas, not the WebAssembly memory) stayed resident
 * for the service's whole life, 90–130 MB more at idle than a later start (docs/benchmarks.md).
 * Resolves to the migrations applied there; a migration that fails there is left to the caller's
 * `migrate`, which fails the same way and reports it as on any start.
 */
async function createInChild(dir: string): Promise<string[]> {
  const entry = fileURLToPath(
    new URL(`./pglite-create${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url),
  );
  // The same loaders (tsx when run from the sources), without a debugger's port it could not take.
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--inspect'));
  const child = fork(entry, [dir], { execArgv, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  let outcome: CreateOutcome | undefined;
  child.on('message', (message: CreateOutcome) => {
    outcome = message;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (outcome && 'applied' in outcome && code === 0) return outcome.applied;
  const reason = outcome && 'error' in outcome ? outcome.error : stderr.trim() || `exit code ${code}`;
  throw new Error(`Creating the embedded database failed: ${reason}`);
}

const EMBEDDED_LISTENING = {
  live: true,
  detail: 'embedded database: one connection, notifications arrive with the commit that sends them',
};

/**
 * Opens the embedded database in `<dataDir>/pglite`. PGlite has no multi-process support: two
 * processes writing the same directory corrupt it. A lock file held for the life of the process
 * makes the second one fail at start with a clear message instead.
 */
export async function openPglite(dataDir: string, _options: DbOptions): Promise<Db> {
  const dir = path.resolve(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const lock = acquireDirLock(path.resolve(dataDir, 'pglite.lock'), dir);
  let db: Wire | undefined;
  let parsers: Parsers;
  let appliedAtCreation: string[] = [];
  try {
    if (!existsSync(path.join(dir, 'PG_VERSION'))) appliedAtCreation = await createInChild(dir);
    db = await threadWire(dir, MEMORY);
    parsers = await typeParsers(db, OWN_PARSERS);
  } catch (error) {
    await db?.close().catch(() => {});
    lock.release();
    throw error;
  }
  return {
    ...pgliteDb(db, parsers, () => lock.release()),
    takeAppliedAtCreation() {
      const applied = appliedAtCreation;
      appliedAtCreation = [];
      return applied;
    },
  };
}

/** The database over `db` as the rest of the code sees one; `release` runs once it is closed. */
export function pgliteDb(db: Wire, parsers: Parsers, release: () => void): Db {
  // Who listens on each channel, and its LISTEN (sent once, when the first handler comes; awaited
  // by every later one). Notifications are read from each answer by store/pglite-statements.ts.
  const channels = new Map<string, { handlers: Set<() => void>; listening: Promise<void> }>();
  const notify = (channel: string) => {
    for (const handler of channels.get(channel)?.handlers ?? []) queueMicrotask(handler);
  };
  const { queryable, transaction, close } = pgliteStatements(db, parsers, notify);
  const root = queryable();
  const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;
  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (fn, options = {}) => transaction(fn, options.maxMs),
    async ping() {
      await root.query('Ping', 'SELECT 1');
    },
    // One process, one connection: there is no pool to be busy.
    async reachable() {
      await root.query('Ping', 'SELECT 1');
    },
    // One process, one connection: a notification arrives with the commit that sent it.
    async listen(channel, events) {
      const handler = () => events.onNotify();
      let entry = channels.get(channel);
      if (!entry) {
        entry = { handlers: new Set(), listening: root.exec('Listen', `LISTEN ${quoted(channel)}`) };
        channels.set(channel, entry);
      }
      const { handlers: set, listening } = entry;
      set.add(handler);
      try {
        await listening;
      } catch (error) {
        set.delete(handler);
        if (set.size === 0 && channels.get(channel) === entry) channels.delete(channel);
        throw error;
      }
      let closed = false;
      return {
        // Nothing to lose, nothing to prove: the notification comes with the commit.
        prove: async () => {},
        async close() {
          if (closed) return;
          closed = true;
          set.delete(handler);
          if (set.size > 0 || channels.get(channel) !== entry) return;
          channels.delete(channel);
          await root.exec('Unlisten', `UNLISTEN ${quoted(channel)}`).catch(() => {});
        },
      };
    },
    listening: () => EMBEDDED_LISTENING,
    async close() {
      try {
        await close();
      } finally {
        release();
      }
    },
  };
}
