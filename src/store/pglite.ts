import { mkdirSync } from 'node:fs';
import path from 'node:path';
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
    db = await PGlite.create(dir, { parsers });
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
    async close() {
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}
