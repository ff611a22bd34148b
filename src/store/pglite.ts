import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite, types } from '@electric-sql/pglite';
import type { Db, DbOptions, Queryable } from './db.js';
import { assertWithin, labelDbError } from './errors.js';
import { acquireDirLock } from './lockfile.js';

// Same value shapes as the node-postgres adapter (see postgres.ts), so no caller can tell them apart.
const parsers = {
  [types.NUMERIC]: (v: string) => Number.parseFloat(v),
  [types.INT8]: (v: string) => Number.parseInt(v, 10),
  [types.DATE]: (v: string) => v,
};

function queryable(target: Pick<PGlite, 'query' | 'exec'>): Queryable {
  return {
    async query<T>(name: string, sql: string, params: readonly unknown[] = []) {
      try {
        const result = await target.query<T>(sql, params as unknown[]);
        return result.rows;
      } catch (error) {
        throw labelDbError(error, name);
      }
    },
    async exec(name: string, sql: string) {
      try {
        await target.exec(sql);
      } catch (error) {
        throw labelDbError(error, name);
      }
    },
  };
}

/**
 * PGlite's PostgreSQL keeps 128 MB of shared buffers in the process's WebAssembly memory; an
 * embedded database serves one process and its files sit in the OS page cache as well, so 32 MB
 * does (docs/benchmarks.md: idle RSS and each scenario measured both ways). Start parameters, not
 * postgresqlconf: that option replaces the whole postgresql.conf of the data directory.
 */
const MEMORY = ['-c', 'shared_buffers=32MB'];

/**
 * A new database is created (initdb) in a worker thread that ends with it: the WebAssembly memory
 * initdb grows to (about 450 MB) is never given back by a running process, so created in the
 * service's own thread it would stay resident for the service's whole life.
 */
async function createInWorker(dir: string): Promise<void> {
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     import(workerData.pglite).then(async ({ PGlite }) => {
       const db = await PGlite.create(workerData.dir);
       await db.close();
       parentPort.postMessage('created');
     }).catch((error) => parentPort.postMessage(String(error && error.stack || error)));`,
    { eval: true, workerData: { dir, pglite: import.meta.resolve('@electric-sql/pglite') } },
  );
  const outcome = await new Promise<unknown>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  if (outcome !== 'created') throw new Error(`Creating the embedded database failed: ${String(outcome)}`);
}

/**
 * Opens the embedded database in `<dataDir>/pglite`. PGlite has no multi-process support: two
 * processes writing the same directory corrupt it. A lock file held for the life of the process
 * makes the second one fail at start with a clear message instead.
 */

export async function openPglite(dataDir: string, _options: DbOptions): Promise<Db> {
  const dir = path.resolve(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const lock = acquireDirLock(path.resolve(dataDir, 'pglite.lock'), dir);
  let db: PGlite;
  try {
    if (!existsSync(path.join(dir, 'PG_VERSION'))) await createInWorker(dir);
    db = await PGlite.create(dir, { parsers, startParams: [...PGlite.defaultStartParams, ...MEMORY] });
  } catch (error) {
    lock.release();
    throw error;
  }
  const root = queryable(db);
  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction(fn, options = {}) {
      // PGlite serialises transactions itself: it has exactly one connection. The clock starts at
      // BEGIN, so time spent waiting for the connection does not count against the limit.
      return db.transaction(async (tx) => {
        const startedAt = performance.now();
        const result = await fn(queryable(tx));
        assertWithin(startedAt, options.maxMs);
        return result;
      });
    },
    async ping() {
      await root.query('Ping', 'SELECT 1');
    },
    // One process, one connection: a notification arrives with the commit that sent it.
    async listen(channel, handlers) {
      const unlisten = await db.listen(channel, () => handlers.onNotify());
      handlers.onLive(true);
      return async () => {
        await unlisten().catch(() => {});
      };
    },
    async close() {
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}
