import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateSecret } from '../src/domain/secrets.js';
import {
  bootApp,
  createPartner,
  createTree,
  listingBody,
  movableClock,
  type TestApp,
  unique,
} from './helpers/app.js';
import { freePort } from './helpers/free-port.js';

/** A Redis server of the test's own, so the test can stop it without touching the machine's. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start');
}

async function metric(app: TestApp, name: string): Promise<number> {
  const reply = await app.call('GET', '/api/admin/v1/metrics', {
    headers: { authorization: `Bearer ${app.running.adminToken}` },
  });
  let total = 0;
  for (const line of reply.text.split('\n')) {
    if (line.startsWith(name)) total += Number(line.split(' ').pop());
  }
  return total;
}

describe('rate limits, in memory (one instance)', () => {
  let app: TestApp;
  // Each sequence starts in a new minute of the service's clock, without waiting for one.
  const clock = movableClock();
  let roots: string[];

  before(async () => {
    app = await bootApp({ RATE_LIMIT_PER_MINUTE: '600', AUTH_FAILURE_LIMIT_PER_MINUTE: '5' }, { clock });
    const tree = await createTree(app);
    roots = [tree.ids.A!];
  });
  after(() => app.close());

  test('a partner over its limit gets 429 RATE_LIMITED with Retry-After; headers on every response; other partners unaffected', async () => {
    const limited = await createPartner(app, { roots });
    await app.admin('PATCH', `/partners/${limited.id}`, { rateLimitPerMinute: 5 });
    const other = await createPartner(app, { roots });
    clock.fresh();
    for (let i = 1; i <= 5; i++) {
      const reply = await app.call('GET', '/api/external/v1/listings', { secret: limited.secret });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['ratelimit-limit'], '5');
      assert.equal(reply.headers['ratelimit-remaining'], String(5 - i));
      const reset = Number(reply.headers['ratelimit-reset']);
      assert.ok(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
    }
    const refused = await app.call('GET', '/api/external/v1/listings', { secret: limited.secret });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'RATE_LIMITED');
    assert.match(refused.body.error.message, /5 requests a minute/);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    // An error response of a limited partner carries the headers too.
    const notFound = await app.call('GET', '/api/external/v1/listings/00000000-0000-4000-8000-000000000000', {
      secret: limited.secret,
    });
    assert.equal(notFound.status, 429);

    const fine = await app.call('GET', '/api/external/v1/listings', { secret: other.secret });
    assert.equal(fine.status, 200);
    assert.equal(fine.headers['ratelimit-limit'], '600');
    assert.equal(fine.headers['ratelimit-remaining'], '599');

    // The operator raises the limit: it applies to the very next request.
    await app.admin('PATCH', `/partners/${limited.id}`, { rateLimitPerMinute: 100 });
    const raised = await app.call('GET', '/api/external/v1/listings', { secret: limited.secret });
    assert.equal(raised.status, 200);
    assert.equal(raised.headers['ratelimit-limit'], '100');
    assert.ok(
      (await metric(app, `forecourt_rate_limit_rejections_total{kind="partner",partner="${limited.id}"}`)) >=
        2,
    );
  });

  test('a bulk upsert of 100 listings counts as one request', async () => {
    const writer = await createPartner(app, { roots, scopes: ['read:listings', 'write:listings'] });
    clock.fresh();
    const items = Array.from({ length: 100 }, () =>
      listingBody({ externalReference: unique('bulk'), dealerProfileId: roots[0] }),
    );
    const bulk = await app.call('POST', '/api/external/v1/listings/bulk-upsert', {
      secret: writer.secret,
      body: items,
    });
    assert.equal(bulk.status, 200, bulk.text);
    assert.equal(bulk.body.data.successCount, 100);
    assert.equal(bulk.headers['ratelimit-remaining'], '599');
    const next = await app.call('GET', '/api/external/v1/listings', { secret: writer.secret });
    assert.equal(next.headers['ratelimit-remaining'], '598');
    assert.ok((await metric(app, 'forecourt_bulk_items_total{outcome="created"}')) >= 100);
  });

  test('failed authentication is limited per client address; a valid secret from that address still works', async () => {
    const partner = await createPartner(app, { roots });
    clock.fresh();
    const bad = 'fc_'.padEnd(49, 'x');
    for (let i = 0; i < 5; i++) {
      const reply = await app.call('GET', '/api/external/v1/listings', { secret: bad });
      assert.equal(reply.status, 401);
    }
    // Over the budget: further failures are refused with 429 until the window ends...
    for (const secret of [bad, `fc_${'A'.repeat(46)}`]) {
      const reply = await app.call('GET', '/api/external/v1/listings', { secret });
      assert.equal(reply.status, 429, reply.text);
      assert.equal(reply.body.error.code, 'RATE_LIMITED');
      assert.match(reply.body.error.message, /failed authentication/);
      assert.match(reply.body.error.message, /with a valid API secret\.$/);
      assert.ok(Number(reply.headers['retry-after']) >= 1);
    }
    // ...but a partner behind the same address (one NAT) is never locked out by them. (It was.)
    const valid = await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
    assert.equal(valid.status, 200, valid.text);
    assert.ok(
      (await metric(app, 'forecourt_rate_limit_rejections_total{kind="auth_failures",partner="none"}')) >= 2,
    );
    assert.ok((await metric(app, 'forecourt_auth_failures_total{reason="malformed",partner="none"}')) >= 5);
    // Probes stay reachable, and so does the operator with the right token.
    assert.equal((await app.call('GET', '/healthz')).status, 200);
    assert.equal((await app.admin<unknown[]>('GET', '/partners')).length > 0, true);
  });

  test('an unknown well-formed secret counts once toward the limit, however its request ends', async () => {
    // Its own service: the budget of the test above is spent for this minute.
    const ownClock = movableClock();
    const own = await bootApp({ AUTH_FAILURE_LIMIT_PER_MINUTE: '6' }, { clock: ownClock });
    try {
      ownClock.fresh();
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        // Well-formed (a checksum that holds), known to no one: looked up, then refused.
        const reply = await own.call('GET', '/api/external/v1/listings', { secret: generateSecret() });
        statuses.push(reply.status);
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 429]);
      assert.equal(
        await metric(own, 'forecourt_rate_limit_rejections_total{kind="auth_failures",partner="none"}'),
        1,
      );
    } finally {
      await own.close();
    }
  });

  test('wrong admin tokens are throttled per address too; the right token still works', async () => {
    clock.fresh();
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof app.call>> | undefined;
    for (let i = 0; i < 8; i++) {
      last = await app.call('GET', '/api/admin/v1/partners', {
        headers: { authorization: `Bearer wrong-token-${i}-xxxxxxxxxxxxxxxxxxxx` },
      });
      statuses.push(last.status);
    }
    // An operator is told to come back with an operator token, not "a valid API secret" (it was).
    assert.match(
      last?.body.error.message,
      /retry after \d+ s with a valid operator token \(fco_…\) or ADMIN_TOKEN\.$/,
    );
    // The failures share the address's budget with the test above (same window): 401 until it is
    // spent, then 429. (Once 8 × 401: the admin token was not throttled at all.)
    assert.ok(
      statuses.every((s) => s === 401 || s === 429),
      statuses.join(),
    );
    assert.deepEqual(statuses.slice(-3), [429, 429, 429]);
    assert.equal((await app.admin<unknown[]>('GET', '/partners')).length > 0, true);
  });
});

describe('rate limits shared through Redis', () => {
  let redisPort: number;
  let redis: ChildProcess | undefined;

  before(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
  });
  after(() => {
    redis?.kill('SIGKILL');
  });

  test('Redis going down never fails a request: counts fall back to the instance, and limits still hold', async () => {
    const redisClock = movableClock();
    const app = await bootApp(
      { REDIS_URL: `redis://127.0.0.1:${redisPort}`, REDIS_TIMEOUT_MS: '200' },
      { clock: redisClock },
    );
    try {
      const tree = await createTree(app);
      const partner = await createPartner(app, { roots: [tree.ids.A!] });
      await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 4 });
      redisClock.fresh();
      // Shared count while Redis is up.
      for (const remaining of ['3', '2']) {
        const reply = await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers['ratelimit-remaining'], remaining);
      }
      // Redis hangs (process stopped, connection open): the round trip times out after
      // REDIS_TIMEOUT_MS and the hit is counted in the instance (its first local hit).
      redis!.kill('SIGSTOP');
      try {
        const started = performance.now();
        const hung = await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
        assert.equal(hung.status, 200);
        assert.equal(hung.headers['ratelimit-remaining'], '3');
        assert.ok(performance.now() - started < 1_000, 'a hanging Redis must not hold requests');
      } finally {
        redis!.kill('SIGCONT');
      }
      const gone = new Promise((resolve) => redis!.once('exit', resolve));
      redis!.kill('SIGKILL');
      await gone;
      // Redis gone: the instance goes on counting on its own, quickly, and still enforces the limit.
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const reply = await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
        assert.ok(performance.now() - started < 1_500, 'a Redis outage must not hold requests');
        assert.ok(reply.headers['ratelimit-limit'], 'headers even without Redis');
        statuses.push(reply.status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
      assert.ok((await metric(app, 'forecourt_rate_limit_store_fallbacks_total')) >= 5);

      // Redis back: counts are shared again (the new server starts empty).
      redis = await startRedis(redisPort);
      let shared = false;
      for (let i = 0; i < 60 && !shared; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const before = await metric(app, 'forecourt_rate_limit_store_fallbacks_total');
        await app.call('GET', '/api/external/v1/reference/enums', { secret: partner.secret });
        shared = (await metric(app, 'forecourt_rate_limit_store_fallbacks_total')) === before;
      }
      assert.ok(shared, 'the service reconnects to Redis by itself');
    } finally {
      await app.close();
    }
  });

  test('an unreachable REDIS_URL from the start: the service starts and answers', async () => {
    const app = await bootApp({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      const tree = await createTree(app);
      const partner = await createPartner(app, { roots: [tree.ids.B!] });
      const reply = await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['ratelimit-remaining'], '999999');
    } finally {
      await app.close();
    }
  });
});
