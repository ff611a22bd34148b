import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDb } from '../src/store/open.js';
import { embedded, seedEmbeddedDb } from './helpers/pglite-template.js';

/**
 * The embedded database runs on a thread of its own (src/store/pglite-wire.ts): what that
 * promises the service, checked on the real database.
 */
const onlyEmbedded = { skip: embedded({}) ? false : 'the embedded database only' };

async function open() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-thread-'));
  await seedEmbeddedDb(dir);
  const db = await openDb({ dataDir: dir, statementTimeoutMs: 5000, connectTimeoutMs: 5000, poolSize: 1 });
  return {
    db,
    async [Symbol.asyncDispose]() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test(
  'a long statement does not hold the service’s thread: timers fire while it runs',
  onlyEmbedded,
  async () => {
    await using opened = await open();
    const started = performance.now();
    let answered = false;
    const sleeping = opened.db.query('Sleep', 'SELECT pg_sleep(1)').then(() => {
      answered = true;
    });
    // In the service's thread the statement would hold this timer until it had answered (1 s).
    // What is judged is the order, not a time: CI runs this file beside a dozen busy processes,
    // where a timer may come late, but not a whole second late.
    const fired = await new Promise<{ after: number; answered: boolean }>((resolve) =>
      setTimeout(() => resolve({ after: performance.now() - started, answered }), 20),
    );
    await sleeping;
    const ended = performance.now() - started;
    assert.ok(ended >= 950, `the statement ran its second (${Math.round(ended)} ms)`);
    assert.equal(
      fired.answered,
      false,
      `a 20 ms timer fired only after the statement had answered (${Math.round(fired.after)} ms)`,
    );
  },
);

test(
  'statements sent together in a transaction, one of them prepared by name twice, all answer in order',
  onlyEmbedded,
  async () => {
    await using opened = await open();
    // LockListings is among the statements the embedded store prepares by name: its second use,
    // sent before the first's answer, must not parse it again.
    const sql = 'SELECT $1::int AS n';
    const rows = await opened.db.transaction((tx) =>
      Promise.all([1, 2, 3].map((n) => tx.query<{ n: number }>('LockListings', sql, [n]))),
    );
    assert.deepEqual(rows, [[{ n: 1 }], [{ n: 2 }], [{ n: 3 }]]);
    assert.deepEqual(await opened.db.query('LockListings', sql, [4]), [{ n: 4 }]);
  },
);

test('after close, a statement is refused with a reason instead of waiting', onlyEmbedded, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-thread-closed-'));
  await seedEmbeddedDb(dir);
  const db = await openDb({ dataDir: dir, statementTimeoutMs: 5000, connectTimeoutMs: 5000, poolSize: 1 });
  try {
    await db.close();
    await assert.rejects(db.query('Ping', 'SELECT 1'), /The embedded database is closed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'close waits for a transaction under way and what was asked before it; what comes after is refused',
  onlyEmbedded,
  async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-thread-close-'));
    await seedEmbeddedDb(dir);
    const options = { dataDir: dir, statementTimeoutMs: 5000, connectTimeoutMs: 5000, poolSize: 1 };
    try {
      const db = await openDb(options);
      await db.exec('T', 'CREATE TABLE close_probe (n int)');
      const writing = db.transaction(async (tx) => {
        await tx.query('T', 'INSERT INTO close_probe VALUES (1)');
        await new Promise((resolve) => setTimeout(resolve, 100));
        await tx.query('T', 'INSERT INTO close_probe VALUES (2)');
        return 'committed';
      });
      const counted = db.query<{ n: number }>('T', 'SELECT count(*)::int AS n FROM close_probe');
      const closing = db.close();
      assert.equal(await writing, 'committed');
      assert.deepEqual(await counted, [{ n: 2 }]);
      await closing;
      await assert.rejects(db.query('Ping', 'SELECT 1'), /The embedded database is closed/);
      const again = await openDb(options);
      try {
        assert.deepEqual(await again.query('T', 'SELECT n FROM close_probe ORDER BY n'), [
          { n: 1 },
          { n: 2 },
        ]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
