import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type Logger, pino } from 'pino';
import { embeddedVacuumLoop } from '../src/background/embedded-vacuum.js';
import { listenLoop } from '../src/background/listen.js';
import { instanceLoops } from '../src/background/loops.js';
import { requestRecordsLoop } from '../src/background/request-records.js';
import { syncHorizonLoop } from '../src/background/sync-horizon.js';
import { webhooksLoop } from '../src/background/webhooks.js';
import { compose, type UseCases } from '../src/compose.js';
import { parseConfig } from '../src/config.js';
import { ACCESS_CHANNEL } from '../src/domain/access-cache.js';
import { createMetrics } from '../src/http/metrics.js';
import { localContext } from '../src/store/audit.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { openDb } from '../src/store/open.js';
import { ensureCursorKey } from '../src/store/service-info.js';
import { listingBody, unique } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { embedded, seedEmbeddedDb } from './helpers/pglite-template.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * Each background loop of background/ driven by itself over a real database (embedded, or
 * PostgreSQL with DATABASE_URL), without the app or HTTPS: the loop is started, woken and stopped
 * by the test, and what it did is read back from the database.
 */
const serverUrl = process.env.DATABASE_URL;

/** Log lines, as a pino logger writes them. */
function capturing(): { logger: Logger; lines: { msg: string; level: number }[] } {
  const lines: { msg: string; level: number }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('background loops over a real database, without HTTPS', () => {
  let dir: string;
  let db: Db;
  let useCases: UseCases;
  const silent = pino({ level: 'silent' });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fc-loops-'));
    if (embedded({})) await seedEmbeddedDb(dir);
    const config = parseConfig({
      DATA_DIR: dir,
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      ...(serverUrl ? { DATABASE_URL: serverUrl } : {}),
    });
    db = await openDb({
      databaseUrl: config.DATABASE_URL,
      dataDir: dir,
      statementTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      poolSize: 4,
    });
    await migrate(db);
    useCases = compose(config, db, {
      cursorKey: await ensureCursorKey(db),
      publicOrigin: 'https://localhost:8443',
    });
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A global partner that writes listings and has webhooks, with a dealer to write them at. */
  async function partnerWithDealer() {
    const [dealer] = await db.query<{ id: string }>(
      'LoopDealer',
      `INSERT INTO dealer_profiles (id, location_code, display_name, city)
       VALUES (gen_random_uuid(), $1, 'Loop dealer', 'Gent') RETURNING id`,
      [unique('LOOP')],
    );
    const created = await useCases.partners.create(
      {
        name: unique('loop partner'),
        scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
        access: { scope: 'global' },
      },
      localContext('test'),
    );
    const partner = {
      id: created.id,
      test: false,
      name: created.name,
      scopes: created.scopes,
      access: { scope: 'global' as const, rootProfileIds: [] as [], profileIds: [] as [] },
      rateLimitPerMinute: null,
    };
    const write = async (reference: string, price: number) => {
      const { results, errors } = await useCases.writes.upsert(
        partner,
        [{ index: 0, reference, body: listingBody({ dealerProfileId: dealer!.id, price }) }],
        { dryRun: false },
      );
      assert.deepEqual(errors, []);
      return results[0]!.listingId!;
    };
    return { partner, write };
  }

  test('webhooks: a pass claims the due endpoint and its round delivers the stored listing; stop waits for a round under way', async () => {
    const receiver: Receiver = await startReceiver({ slowMs: 600 });
    const { partner, write } = await partnerWithDealer();
    const endpoint = await useCases.webhooks.create(
      { id: partner.id, test: false, access: partner.access },
      { url: receiver.url },
      localContext('test'),
    );
    receiver.secrets.push(endpoint.secret);
    const rounds = useCases.webhookRounds(silent);
    const delivering = webhooksLoop(rounds, { concurrency: 2, logger: silent });
    try {
      const id = await write(unique('HOOK'), 20_000);
      await delivering.start();
      await eventually(
        () => receiver.listings.has(id),
        () => `deliveries: ${JSON.stringify(receiver.requests.map((r) => r.count))}`,
      );
      assert.deepEqual(receiver.problems, []);
      // What GET /listings/{id} answers is the stored JSON; the delivery carries that text.
      const [stored] = await db.query<{ json: string }>(
        'StoredJson',
        `SELECT ${useCases.listingJson.columns} FROM listings l ${useCases.listingJson.joins ?? ''} WHERE l.id = $1`,
        [id],
      );
      assert.deepEqual(receiver.listings.get(id), JSON.parse(useCases.listingJson.read(stored!).json));
      // The receiver has the listing before it answers: the attempt is kept once the answer is in.
      const attempts = () =>
        db.query<{ status: string; listing_count: number }>(
          'Attempt',
          'SELECT status, listing_count FROM webhook_attempts WHERE endpoint_id = $1',
          [endpoint.id],
        );
      await eventually(
        async () => (await attempts()).length > 0,
        () => 'the attempt in the delivery log',
      );
      assert.deepEqual(await attempts(), [{ status: 'succeeded', listing_count: 1 }]);
      assert.equal(delivering.stats().failures, 0);

      // A slow answer: stopping waits for it, and the round records it before the loop is stopped.
      receiver.slowRate = 1;
      const later = await write(unique('HOOK'), 21_000);
      await eventually(
        () => receiver.inFlight > 0,
        () => 'a delivery under way',
      );
      const began = performance.now();
      await delivering.stop();
      assert.ok(performance.now() - began >= 300, 'stop waited for the answer');
      assert.ok(receiver.listings.has(later));
      const [held] = await db.query<{ lease_owner: string | null; attempts: number }>(
        'Lease',
        `SELECT lease_owner, (SELECT count(*)::int FROM webhook_attempts a WHERE a.endpoint_id = e.id) AS attempts
         FROM webhook_endpoints e WHERE id = $1`,
        [endpoint.id],
      );
      assert.deepEqual(held, { lease_owner: null, attempts: 2 }, 'recorded, and the lease released');
    } finally {
      await delivering.stop();
      await receiver.close();
    }
  });

  test('request records: a pass writes what was recorded, and stop writes what is left', async () => {
    const recorder = useCases.requestRecorder;
    const flushing = requestRecordsLoop(recorder);
    const failure = (requestId: string) => ({
      requestId,
      partnerId: null,
      key: null,
      method: 'GET',
      route: '/listings',
      status: 400,
      durationMs: 1,
    });
    const kept = async (requestId: string) =>
      (await db.query('Kept', 'SELECT 1 FROM request_failures WHERE request_id = $1', [requestId])).length;
    const first = unique('loop-pass');
    recorder.record(failure(first));
    await flushing.start();
    assert.equal(await kept(first), 0, 'the first pass comes a flush interval after start');
    await flushing.wake();
    assert.equal(await kept(first), 1, 'written by the pass');
    const last = unique('loop-last');
    recorder.record(failure(last));
    await flushing.stop();
    assert.equal(await kept(last), 1, 'written when the loop stopped');
    assert.deepEqual([flushing.stats().passes, flushing.stats().failures], [1, 0]);
  });

  test('sync horizon: a pass publishes the primary’s horizon for a replica', async () => {
    const publishing = syncHorizonLoop(useCases.syncHorizon, silent);
    const published = async () =>
      (await db.query<{ at: string }>('Published', `SELECT published_at::text AS at FROM sync_horizon`))[0]!
        .at;
    const before = await published();
    await publishing.start();
    const after = await published();
    assert.notEqual(after, before, 'published by the first pass, at start');
    await new Promise((resolve) => setTimeout(resolve, 10));
    await publishing.wake();
    assert.ok((await published()) > after, 'and again at the next');
    await publishing.stop();
    assert.equal(publishing.stats().failures, 0);
  });

  test('embedded vacuum: a pass vacuums and analyzes, and says so', {
    skip: serverUrl ? 'PostgreSQL has autovacuum of its own' : false,
  }, async () => {
    const { logger, lines } = capturing();
    // A minute apart: the test wakes the only pass it wants.
    const vacuuming = embeddedVacuumLoop(db, 60_000, logger);
    await vacuuming.start();
    assert.equal(vacuuming.stats().passes, 0, 'the first pass comes an interval after start');
    await vacuuming.wake();
    await vacuuming.stop();
    assert.deepEqual([vacuuming.stats().passes, vacuuming.stats().failures], [1, 0]);
    const said = lines.find((l) => /vacuumed and analyzed the embedded database/.test(l.msg)) as
      | { vacuumed?: string[] }
      | undefined;
    assert.ok(said?.vacuumed?.includes('public.listings'), JSON.stringify(lines));
  });

  test('listen: live once proven, notifications heard; a lost connection is said, and listened again', async () => {
    const live: boolean[] = [];
    let heard = 0;
    const listening = listenLoop(
      db,
      ACCESS_CHANNEL,
      { onNotify: () => heard++, onLive: (value) => live.push(value) },
      { everyMs: 200 },
    );
    try {
      await listening.start();
      assert.deepEqual(live, [true], 'live when start resolves');
      assert.equal(db.listening().live, true);
      await db.query('Notify', 'SELECT pg_notify($1, $2)', [ACCESS_CHANNEL, 'partners']);
      await eventually(
        () => heard > 0,
        () => 'a notification heard',
      );
      // Proven again at every pass (a heartbeat), without saying anything new.
      await listening.wake();
      assert.deepEqual(live, [true]);
      if (!serverUrl) return;
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      try {
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE application_name = 'forecourt-listen' AND datname = current_database()`,
        );
      } finally {
        await admin.end();
      }
      await eventually(
        () => live.length >= 3,
        () => `live: ${JSON.stringify(live)}`,
      );
      assert.deepEqual(live.slice(0, 3), [true, false, true], 'lost, then listening again');
      assert.equal(listening.stats().failures, 1, 'the loss is a failure of the loop (it backed off)');
      assert.equal(db.listening().live, true);
    } finally {
      await listening.stop();
    }
  });

  test('the list: an instance’s loops start in order, show in the metrics, and stop', async () => {
    const loops = instanceLoops({
      config: { EMBEDDED_VACUUM_INTERVAL_MS: 60_000, WEBHOOK_CONCURRENCY: 2 },
      db,
      replica: true,
      accessCache: useCases.accessCache,
      requestRecorder: useCases.requestRecorder,
      syncHorizon: useCases.syncHorizon,
      webhooks: { rounds: useCases.webhookRounds(silent), saturated: () => false },
      logger: silent,
    });
    const names = loops.loops.map((l) => l.name);
    assert.deepEqual(names, [
      'listen',
      'sync-horizon',
      'request-records',
      'test-data-expiry',
      ...(serverUrl ? [] : ['embedded-vacuum']),
      'webhooks',
      'webhook-log',
    ]);
    await loops.start();
    const listen = loops.stats().find((s) => s.name === 'listen')!;
    assert.equal(listen.passes, 1, 'the first attempt to listen is over when start resolves');
    const metrics = createMetrics(() => undefined, loops.stats);
    await eventually(
      () => loops.stats().every((s) => s.passes > 0 || s.name === 'embedded-vacuum'),
      () => JSON.stringify(loops.stats()),
    );
    const text = await metrics.registry.metrics();
    for (const name of names) {
      assert.match(text, new RegExp(`forecourt_background_passes_total\\{loop="${name}"\\} \\d`));
      assert.match(text, new RegExp(`forecourt_background_failures_total\\{loop="${name}"\\} 0`));
    }
    assert.match(text, /forecourt_background_last_success_timestamp_seconds\{loop="listen"\} \d{10}/);
    assert.match(text, /forecourt_background_pass_seconds_total\{loop="webhooks"\} [\d.e-]+/);
    await loops.stop();
    const passes = loops.stats().map((s) => s.passes);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(
      loops.stats().map((s) => s.passes),
      passes,
      'no pass once stopped',
    );
  });
});
