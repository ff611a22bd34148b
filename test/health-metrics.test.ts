import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { bootApp, createPartner, createTree, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';

describe('health, metrics, limits against slow clients', () => {
  let app: TestApp;
  let partner: { id: string; secret: string };

  before(async () => {
    app = await bootApp({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
    const tree = await createTree(app);
    partner = await createPartner(app, { roots: [tree.ids.A!] });
  });
  after(() => app.close());

  test('/healthz and /readyz answer without a secret; /readyz fails while a migration is missing', async () => {
    const health = await app.call('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const ready = await app.call('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.database, app.running.db.kind);
    // Changes to partners are proven to arrive (a notification the instance sent itself came back).
    assert.equal(ready.body.partnerAccess.cached, true, ready.text);
    assert.equal(ready.headers['cache-control'], 'no-store');

    const { db } = app.running;
    const [row] = await db.query<{ version: number; name: string }>(
      'T',
      'DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations) RETURNING version, name',
    );
    try {
      const notReady = await app.call('GET', '/readyz');
      assert.equal(notReady.status, 503);
      assert.equal(notReady.body.error.code, 'SERVICE_UNAVAILABLE');
      assert.match(notReady.body.error.message, new RegExp(`migrations not applied: ${row!.name}`));
      assert.ok(notReady.headers['retry-after']);
    } finally {
      await db.query('T', 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        row!.version,
        row!.name,
      ]);
    }
    assert.equal((await app.call('GET', '/readyz')).status, 200);
  });

  test('Prometheus metrics on the admin API only: requests by route and status, latency, auth failures', async () => {
    await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
    await app.call('GET', '/api/external/v1/listings', { secret: 'fc_nope' });
    await app.call('GET', '/no/such/path/8f3a');

    const unauthorized = await app.call('GET', '/api/admin/v1/metrics');
    assert.equal(unauthorized.status, 401);
    const metrics = await app.call('GET', '/api/admin/v1/metrics', {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(metrics.status, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain/);
    const text = metrics.text;
    assert.match(
      text,
      /forecourt_http_requests_total\{method="GET",route="\/api\/external\/v1\/listings",status="200"\} [1-9]/,
    );
    assert.match(
      text,
      /forecourt_http_requests_total\{method="GET",route="\/api\/external\/v1\/listings",status="401"\} [1-9]/,
    );
    assert.match(
      text,
      /forecourt_http_request_duration_seconds_bucket\{le="0.1",method="GET",route="\/api\/external\/v1\/listings",status="200"\}/,
    );
    assert.match(text, /forecourt_auth_failures_total\{reason="malformed",partner="none"\} [1-9]/);
    assert.match(text, /forecourt_process_resident_memory_bytes/);
    // Unknown paths are one series, not one per path.
    assert.doesNotMatch(text, /8f3a/);
    assert.match(text, /route="unmatched",status="404"/);
    if (app.running.db.kind === 'postgres') {
      assert.match(text, /forecourt_db_pool_connections\{state="total"\} [0-9]/);
    }
    // Never on the partner API.
    for (const path of ['/api/external/v1/metrics', '/metrics']) {
      const reply = await app.call('GET', path, { secret: partner.secret });
      assert.equal(reply.status, 404, path);
    }
  });

  // The partner row is written at most once a minute (store/partners.ts); the last use a partner's
  // page shows comes from the request records, which the recorder writes in batches (issue 46:
  // "last used" lagged behind the partner's requests).
  test('lastUsedAt follows the latest request, from the batched request records', async () => {
    const fresh = await createPartner(app, { roots: [] as string[], global: true });
    const lastUsed = async () =>
      (await app.admin('GET', `/partners/${fresh.id}`)).lastUsedAt as string | null;
    await app.call('GET', '/api/external/v1/listings', { secret: fresh.secret });
    let first: string | null = null;
    await eventually(
      async () => {
        first = await lastUsed();
        return first !== null;
      },
      () => 'lastUsedAt still null after the first request',
    );
    await new Promise((r) => setTimeout(r, 20));
    const sentAt = Date.now();
    await app.call('GET', '/api/external/v1/listings', { secret: fresh.secret });
    let now: string | null = null;
    await eventually(
      async () => {
        now = await lastUsed();
        return Date.parse(now ?? '') >= sentAt - 5;
      },
      () => `lastUsedAt ${now}, first ${first}, second request sent at ${new Date(sentAt).toISOString()}`,
    );
  });

  test('a slow-loris client (headers trickling in) is cut off after HEADERS_TIMEOUT_MS', async () => {
    const url = new URL(app.url);
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    const started = performance.now();
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    const trickle = setInterval(
      () => socket.write(`X-Slow-${Math.random().toString(36).slice(2, 6)}: 1\r\n`),
      200,
    );
    const closed = await new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      socket.once('error', () => resolve(true));
      setTimeout(() => resolve(false), 6_000);
    });
    clearInterval(trickle);
    socket.destroy();
    assert.ok(closed, 'the connection must be closed by the service');
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 4_000, `cut off after ${Math.round(elapsed)} ms`);
    assert.doesNotMatch(received, /200 OK/);
    // The service itself is fine.
    assert.equal((await app.call('GET', '/healthz')).status, 200);
  });

  test('a client that connects and sends nothing is dropped', async () => {
    const url = new URL(app.url);
    const net = await import('node:net');
    const socket = net.connect(Number(url.port), url.hostname);
    const started = performance.now();
    const closed = await new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 5_000);
    });
    socket.destroy();
    assert.ok(closed);
    assert.ok(performance.now() - started < 3_000);
  });

  test('draining (shutdown begun): requests get 503 SERVICE_UNAVAILABLE in the error envelope, /readyz fails, /healthz answers', async () => {
    const draining = await bootApp();
    try {
      draining.running.app.startDraining();
      for (const path of ['/api/external/v1/listings', '/readyz']) {
        const reply = await draining.call('GET', path);
        assert.equal(reply.status, 503, path);
        assert.equal(reply.body.error.code, 'SERVICE_UNAVAILABLE');
        assert.ok(reply.body.error.requestId);
        assert.equal(reply.headers.connection, 'close');
        assert.ok(reply.headers['retry-after']);
      }
      assert.equal((await draining.call('GET', '/healthz')).status, 200);
    } finally {
      await draining.close();
    }
  });
});
