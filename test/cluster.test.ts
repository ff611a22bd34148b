import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.js';
import { freePort } from './helpers/free-port.js';
import { httpsCall } from './helpers/https-call.js';
import { freshDatabase, skipWithoutPostgres } from './helpers/postgres.js';
import { startServe } from './helpers/service-process.js';

/** WORKERS=N (src/cluster.ts): N processes serving one port, run and stopped as one service. */

describe('WORKERS: what it needs', () => {
  test('above 1 it is refused without PostgreSQL or without Redis, each with the reason', () => {
    assert.throws(
      () => parseConfig({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379' }),
      (e: Error) => e instanceof ConfigError && /WORKERS above 1 needs DATABASE_URL/.test(e.message),
    );
    assert.throws(
      () => parseConfig({ WORKERS: '2', DATABASE_URL: 'postgres://x@127.0.0.1/db' }),
      (e: Error) =>
        e instanceof ConfigError && /WORKERS above 1 needs REDIS_URL.*rate limits/.test(e.message),
    );
    assert.throws(() => parseConfig({ WORKERS: '0' }), /WORKERS/);
    assert.equal(parseConfig({}).WORKERS, 1);
  });
});

interface Line {
  msg?: string;
  pid?: number;
  route?: string;
}

describe('WORKERS=2 on PostgreSQL and Redis', { skip: skipWithoutPostgres }, () => {
  test('two processes share the port and the metrics; a worker that dies is replaced; SIGTERM stops all', async () => {
    const db = await freshDatabase();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-cluster-'));
    const lines: Line[] = [];
    const serve = await startServe(
      dataDir,
      {
        DATABASE_URL: db.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        WORKERS: '2',
        PORT: String(await freePort()),
      },
      (line) => lines.push(JSON.parse(line) as Line),
    );
    const until = async (what: string, ok: () => boolean) => {
      const deadline = Date.now() + 30_000;
      while (!ok()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${serve.stderr()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const listening = () => lines.filter((l) => l.msg === 'Forecourt is listening');
    try {
      await until('two workers listening', () => listening().length === 2);
      const workers = listening().map((l) => l.pid!);
      assert.equal(new Set(workers).size, 2, 'two worker processes');
      assert.ok(!workers.includes(serve.child.pid!), 'the primary serves nothing itself');

      const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
      // A new connection each time: connections, not requests, are dealt out to the workers.
      const admin = (urlPath: string) =>
        httpsCall(serve.url, serve.dispatcher, 'GET', `/api/admin/v1${urlPath}`, {
          headers: { authorization: `Bearer ${token}`, connection: 'close' },
        });
      const N = 20;
      for (let i = 0; i < N; i++) assert.equal((await admin('/partners')).status, 200);
      await until(
        'the request lines',
        () => lines.filter((l) => l.route === '/api/admin/v1/partners').length === N,
      );
      const served = new Set(lines.filter((l) => l.route === '/api/admin/v1/partners').map((l) => l.pid));
      assert.deepEqual([...served].sort(), [...workers].sort(), 'both workers served requests');

      // Whichever worker a scrape lands on, it counts every worker's requests.
      for (let i = 0; i < 2; i++) {
        const metrics = await admin('/metrics');
        assert.equal(metrics.status, 200);
        const counted = [
          ...metrics.text.matchAll(
            /^forecourt_http_requests_total\{[^}]*route="\/api\/admin\/v1\/partners"[^}]*\} (\d+)/gm,
          ),
        ]
          .map((m) => Number(m[1]))
          .reduce((a, b) => a + b, 0);
        assert.equal(counted, N, 'the requests of both workers, added up');
      }

      // A worker killed outright is replaced; the service answers throughout.
      process.kill(workers[0]!, 'SIGKILL');
      await until('a replacement worker', () => listening().length === 3);
      const replacement = listening()[2]!.pid!;
      assert.ok(!workers.includes(replacement));
      for (let i = 0; i < 4; i++) assert.equal((await admin('/partners')).status, 200);
      assert.ok(lines.some((l) => l.msg === 'a worker process exited: starting another in 1 s'));

      // SIGTERM to the primary stops every worker, then the primary, cleanly.
      serve.child.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
      for (const pid of [workers[1]!, replacement]) {
        assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} is gone`);
      }
    } finally {
      await serve.kill();
      rmSync(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  });
});
