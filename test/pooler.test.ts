import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { ConfigError } from '../src/config.js';
import { openDb } from '../src/store/open.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp, unique } from './helpers/app.js';
import { putOk } from './helpers/listings-api.js';
import { lockTable, run } from './helpers/postgres.js';
import { startServe } from './helpers/service-process.js';

/**
 * Behind a real PgBouncer with its defaults (only pool_mode set; .ci/pgbouncer starts one per
 * mode, and .ci/run runs this file behind each): PGBOUNCER_URL is the pooler, DATABASE_DIRECT_URL
 * the same server without it, DATABASE_POOL_MODE the pooler's mode. The file makes a database of
 * its own and runs two instances on it, as operators with several instances do.
 */
const pooler = process.env.PGBOUNCER_URL;
const direct = process.env.DATABASE_DIRECT_URL;
const mode = process.env.DATABASE_POOL_MODE;
const skip =
  pooler && direct && (mode === 'session' || mode === 'transaction')
    ? false
    : 'needs a PgBouncer: set PGBOUNCER_URL, DATABASE_DIRECT_URL and DATABASE_POOL_MODE (.ci/run starts one per pool mode with .ci/pgbouncer)';

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

describe(`behind PgBouncer (pool_mode = ${mode ?? 'unset'}), two instances`, { skip }, () => {
  const name = `pooler_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const directUrl = withDatabase(direct ?? 'postgres://x/', name);
  const poolerUrl = withDatabase(pooler ?? 'postgres://x/', name);
  // Small pools and no webhook pool: in session mode each client connection holds a server
  // connection until it closes (pg keeps idle ones 30 s), and PgBouncer's default_pool_size is 20
  // per database and user; past it requests wait in PgBouncer's queue (docs/operations.md). Three
  // instances at most run here at once: 3 x 4 = 12.
  const limits = { DB_POOL_SIZE: '4', WEBHOOK_CONCURRENCY: '0' };
  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: poolerUrl,
    DATABASE_DIRECT_URL: directUrl,
    DATABASE_POOL_MODE: mode!,
    ...limits,
    ...extra,
  });
  let a: TestApp;
  let b: TestApp;
  let dealerId: string;

  before(async () => {
    await run(withDatabase(direct!, 'postgres'), `CREATE DATABASE ${name}`);
    // Started together, as a deploy starts them: the migrations take turns on the direct connection.
    [a, b] = await Promise.all([bootApp(env()), bootApp(env())]);
    dealerId = (await createTree(a)).ids.A!;
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await run(withDatabase(direct!, 'postgres'), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  // Not a list page: so that a failure here is about access, whatever list pages do.
  const status = async (app: TestApp, secret: string) =>
    (await app.call('GET', `${EXT}/locations`, { secret })).status;

  /** How long `app` takes to refuse `secret` (401), polled every 20 ms for at most 3 s. */
  async function refusedWithin(app: TestApp, secret: string): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < 3000) {
      if ((await status(app, secret)) === 401) return performance.now() - started;
      await new Promise((r) => setTimeout(r, 20));
    }
    return Number.POSITIVE_INFINITY;
  }

  test('both start (no startup parameter PgBouncer refuses) and keep partners\u2019 access, proven to hear changes', async () => {
    for (const app of [a, b]) {
      const ready = await app.call('GET', '/readyz');
      assert.equal(ready.status, 200, ready.text);
      assert.equal(ready.body.partnerAccess.cached, true, ready.text);
    }
  });

  test('list pages and counts under concurrency, prepared statements or not, on both instances', async () => {
    const partner = await createPartner(a, {
      roots: [dealerId],
      scopes: ['read:listings', 'read:locations', 'write:listings'],
    });
    const refs = Array.from({ length: 6 }, () => unique('pool'));
    for (const ref of refs) await putOk(a, partner.secret, ref, listingBody());
    // Many filter shapes at once over both instances' pools: in transaction mode, named statements
    // collide on PgBouncer's shared server connections ("prepared statement ... already exists").
    const paths = [
      '/listings',
      '/listings?status=all',
      '/listings?pageSize=2',
      '/listings?sort=-price',
      '/listings?sort=createdAt&mine=true',
      '/listings?status=all&pageSize=3&page=2',
      '/locations?withCounts=true',
    ];
    // Eight rounds of every shape on both instances at once (14 at a time, over the connections
    // of the first round): 112 at once opened as many TLS connections together, and in CI's
    // niced pass their handshakes outlasted the client's 10 s connect timeout.
    for (let round = 0; round < 8; round++) {
      const replies = await Promise.all(
        [a, b].flatMap((app) => paths.map((p) => app.call('GET', `${EXT}${p}`, { secret: partner.secret }))),
      );
      for (const reply of replies) assert.equal(reply.status, 200, reply.text);
    }
    const full = await b.call('GET', `${EXT}/listings?status=all`, { secret: partner.secret });
    assert.equal(full.body.pagination.totalItems, refs.length);
  });

  test('a rotation or a disable on one instance is refused by the other within 1 s', async (t) => {
    const partner = await createPartner(a, { roots: [dealerId] });
    // B has seen the secret (and keeps it: its cache is on, see the first test).
    assert.equal(await status(b, partner.secret), 200);
    assert.equal(await status(b, partner.secret), 200);
    const rotated = await a.admin<{ secret: string }>('POST', `/partners/${partner.id}/rotate-secret`, {});
    const afterRotation = await refusedWithin(b, partner.secret);
    // On the record of every run: how close a loaded machine comes to the bound.
    t.diagnostic(`refused ${Math.round(afterRotation)} ms after the rotation`);
    assert.ok(
      afterRotation < 1000,
      `the old secret still worked on the other instance after ${afterRotation} ms`,
    );

    assert.equal(await status(b, rotated.secret), 200);
    assert.equal(await status(b, rotated.secret), 200);
    await a.admin('PATCH', `/partners/${partner.id}`, { disabled: true });
    const afterDisable = await refusedWithin(b, rotated.secret);
    t.diagnostic(`refused ${Math.round(afterDisable)} ms after the disable`);
    assert.ok(
      afterDisable < 1000,
      `the disabled partner was still served by the other instance after ${afterDisable} ms`,
    );
  });

  test('statements slower than STATEMENT_TIMEOUT_MS, and writes past WRITE_TX_TIMEOUT_MS, are cut by the database', async () => {
    const app = await bootApp(env({ STATEMENT_TIMEOUT_MS: '300', WRITE_TX_TIMEOUT_MS: '400' }));
    try {
      // The limit is what the database itself applies to the service's statements, in either mode.
      const [row] = await app.running.db.query<{ statement_timeout: string }>('T', 'SHOW statement_timeout');
      assert.equal(row!.statement_timeout, '300ms');
      const partner = await createPartner(app, {
        roots: [dealerId],
        scopes: ['read:listings', 'read:locations', 'write:listings'],
      });
      assert.equal(await status(app, partner.secret), 200);
      const lock = await lockTable(directUrl, 'listings');
      try {
        for (const [method, path, body] of [
          ['GET', `${EXT}/listings?status=all`, undefined],
          ['PUT', `${EXT}/listings/${unique('slow')}`, listingBody()],
        ] as const) {
          const started = performance.now();
          const reply = await app.call(method, path, { secret: partner.secret, ...(body ? { body } : {}) });
          const elapsed = performance.now() - started;
          assert.equal(reply.status, 503, `${method}: ${reply.text}`);
          assert.equal(reply.body.error.code, 'SERVICE_UNAVAILABLE');
          assert.ok(elapsed < 2000, `${method} answered after ${Math.round(elapsed)} ms`);
        }
      } finally {
        await lock.release();
      }
      assert.equal(await status(app, partner.secret), 200);
      // And it stays ours: the pooler's other clients, handed the server connections the service
      // just used, find PostgreSQL's default.
      for (let i = 0; i < 5; i++) {
        const [other] = (await run(poolerUrl, 'SHOW statement_timeout')).rows;
        assert.equal(other.statement_timeout, '0', 'a timeout of the service leaked to another client');
      }
    } finally {
      await app.close();
    }
  });

  test('a transaction-mode pooler configured as session mode: the failures name DATABASE_POOL_MODE', {
    skip: mode === 'transaction' ? false : 'only a transaction-mode pooler mixes server connections',
  }, async () => {
    const db = await openDb({
      databaseUrl: poolerUrl,
      dataDir: os.tmpdir(),
      statementTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      poolSize: 4,
      poolMode: 'session',
    });
    try {
      // Named statements from four clients over PgBouncer's shared server connections: one
      // finds its name already there, or missing, sooner or later.
      const texts = Array.from({ length: 4 }, (_, i) => `SELECT $1::int AS n /* ${name} ${i} */`);
      const failures: Error[] = [];
      for (let round = 0; round < 50 && failures.length === 0; round++) {
        const outcomes = await Promise.allSettled(
          texts.flatMap((text) => [1, 2].map((n) => db.query('ListListings', text, [n]))),
        );
        for (const outcome of outcomes)
          if (outcome.status === 'rejected') failures.push(outcome.reason as Error);
      }
      assert.ok(failures.length > 0, 'no named statement collided');
      for (const failure of failures) {
        assert.match(failure.message, /set DATABASE_POOL_MODE=transaction/);
        // The log line of the 500 (pino writes the error's message with its causes'): the
        // setting named once, not once per cause.
        const logged = pino.stdSerializers.err(failure).message;
        assert.equal(logged.match(/DATABASE_POOL_MODE/g)?.length, 1, logged);
      }
    } finally {
      await db.close();
    }
  });

  test('a transaction-mode pooler with DATABASE_POOL_MODE=session: the start is refused, naming the setting', {
    skip: mode === 'transaction' ? false : 'only a transaction-mode pooler mixes server connections',
  }, async () => {
    const started = performance.now();
    await assert.rejects(
      bootApp(env({ DATABASE_POOL_MODE: 'session' })),
      (error: Error) =>
        error instanceof ConfigError &&
        /^DATABASE_POOL_MODE is session .*DATABASE_URL leads to a pooler in transaction mode: .*same server session.* Set DATABASE_POOL_MODE=transaction/.test(
          error.message,
        ),
    );
    assert.ok(performance.now() - started < 5_000, 'told at once, not after a timeout');
  });

  test('through the pooler in its own mode, and directly, the start proves a session per connection', async () => {
    const { proveSessions } = await import('../src/store/postgres-sessions.js');
    assert.deepEqual(await proveSessions(directUrl, 5_000), { sessions: true });
    const verdict = await proveSessions(poolerUrl, 5_000);
    assert.equal(verdict.sessions, mode === 'session', JSON.stringify(verdict));
  });

  test('forecourt serve listening through the pooler itself logs whether it hears changes, and why not', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-pooler-'));
    const lines: string[] = [];
    const serve = await startServe(dataDir, { ...env(), DATABASE_DIRECT_URL: '' }, (line) =>
      lines.push(line),
    );
    try {
      const warning = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; detail?: string })
        .find((entry) => entry.msg.startsWith('not hearing changes to partners'));
      if (mode === 'transaction') {
        assert.ok(warning, `no warning among:\n${lines.join('\n')}`);
        assert.equal(warning.level, 40);
        assert.match(warning.msg, /access is read per request \(not cached\)/);
        assert.match(
          warning.detail ?? '',
          /did not arrive on the LISTEN connection within 1000 ms .*DATABASE_DIRECT_URL/,
        );
      } else {
        assert.equal(warning, undefined, 'session mode hears through the pooler');
      }
    } finally {
      await serve.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('LISTEN through the pooler itself: kept only when notifications are proven to arrive, and said so', async () => {
    // No DATABASE_DIRECT_URL: LISTEN goes through PgBouncer. In session mode the client keeps
    // its server connection and hears; in transaction mode LISTEN succeeds but nothing arrives.
    const app = await bootApp(env({ DATABASE_DIRECT_URL: '' }));
    try {
      const ready = await app.call('GET', '/readyz');
      assert.equal(ready.status, 200, ready.text);
      if (mode === 'transaction') {
        assert.equal(ready.body.partnerAccess.cached, false, ready.text);
        assert.match(ready.body.partnerAccess.detail, /did not arrive .* within 1000 ms/);
      } else {
        assert.equal(ready.body.partnerAccess.cached, true, ready.text);
      }
      // Either way a rotation elsewhere is refused here at once.
      const partner = await createPartner(app, { roots: [dealerId] });
      assert.equal(await status(app, partner.secret), 200);
      assert.equal(await status(app, partner.secret), 200);
      await a.admin('POST', `/partners/${partner.id}/rotate-secret`, {});
      const refused = await refusedWithin(app, partner.secret);
      assert.ok(refused < 1000, `the old secret still worked after ${refused} ms`);
    } finally {
      await app.close();
    }
  });
});
