import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { bootApp, createPartner, createTree, listingBody, type TestApp, unique } from './helpers/app.js';
import { type ReplicaPair, startReplicaPair } from './helpers/replica.js';
import { follow, type Synced } from './helpers/sync-walk.js';
import { runTogether } from './helpers/together.js';

/**
 * docs/sync.md: a cursor read on a streaming replica may only pass what the replica has replayed.
 * A real primary and replica (test/helpers/replica.ts); the service writes to the one and reads
 * listings from the other. Replay is paused while writers run, so the replica falls seconds
 * behind; a reader following cursors there must still end with exactly the primary's state.
 * Runs in the PostgreSQL pass (it needs the server's binaries, not the machine's server).
 */
describe('a streaming replica (DATABASE_READ_URL): cursor readers there skip nothing', {
  skip: !process.env.DATABASE_URL && 'runs in the PostgreSQL pass',
}, () => {
  let pair: ReplicaPair;
  let app: TestApp;
  let primary: pg.Client;
  let replica: pg.Client;

  before(async () => {
    pair = await startReplicaPair();
    const admin = new pg.Client({ connectionString: pair.primaryUrl('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE forecourt');
    await admin.end();
    primary = new pg.Client({ connectionString: pair.primaryUrl('forecourt') });
    await primary.connect();
    // The new database reaches the replica by replay.
    for (let i = 0; ; i++) {
      replica = new pg.Client({ connectionString: pair.replicaUrl('forecourt') });
      try {
        await replica.connect();
        break;
      } catch (error) {
        if (i > 100) throw error;
        await sleep(100);
      }
    }
    app = await bootApp({
      DATABASE_URL: pair.primaryUrl('forecourt'),
      DATABASE_READ_URL: pair.replicaUrl('forecourt'),
      WRITE_TX_TIMEOUT_MS: '2000',
    });
  });
  after(async () => {
    await replica?.query('SELECT pg_wal_replay_resume()').catch(() => {});
    await app?.close();
    await primary?.end();
    await replica?.end();
    pair?.stop();
  });

  /** Waits until the replica has replayed everything the primary has written so far. */
  async function caughtUp(): Promise<void> {
    const [{ lsn }] = (await primary.query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows;
    for (let i = 0; i < 200; i++) {
      const [{ done }] = (await replica.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn]))
        .rows;
      if (done) return;
      await sleep(50);
    }
    throw new Error('the replica did not catch up');
  }

  test('replay paused while writers run: the reader misses nothing and catches up on resume', async () => {
    const tree = await createTree(app);
    const partner = await createPartner(app, {
      roots: [tree.ids.B!],
      scopes: ['read:listings', 'write:listings'],
    });
    const refs = Array.from({ length: 60 }, (_, i) => unique(`R${i}`));
    const pick = () => refs[Math.floor(Math.random() * refs.length)]!;
    const copy = new Map<string, Synced>();
    let cursor: string | undefined;
    let stop = false;
    let writes = 0;

    const walk = async () => {
      cursor = (await follow(app, partner.secret, 'status=all&pageSize=7', cursor, copy)).cursor;
    };
    const writer = async () => {
      while (!stop) {
        const r =
          Math.random() < 0.5
            ? await app.call('PUT', `/api/external/v1/listings/${pick()}`, {
                secret: partner.secret,
                body: listingBody({ price: 1000 + Math.floor(Math.random() * 9000) }),
              })
            : await app.call('POST', '/api/external/v1/listings/bulk-upsert', {
                secret: partner.secret,
                body: Array.from({ length: 5 }, () => ({
                  externalReference: pick(),
                  ...listingBody({ price: 500 + Math.floor(Math.random() * 500) }),
                })),
              });
        assert.ok(r.status < 300 || r.status === 503, r.text);
        writes++;
      }
    };
    // Writes that commit late, out of updatedAt order (within the service's write limit, as every
    // write is): rows committed meanwhile reach the replica first. A replica that let cursors pass
    // them would put the late rows behind the cursor.
    const slowWriter = (writeLate: boolean) => async () => {
      while (!stop) {
        await app.running.db.transaction(async (tx) => {
          await tx.query('SlowBegin', 'SELECT 1');
          if (writeLate) await sleep(500);
          await tx.query(
            'SlowTouch',
            `UPDATE listings SET price = price + 1, updated_at = next_updated_at(updated_at)
             WHERE partner_id = $1 AND external_reference = $2 AND price IS NOT NULL`,
            [partner.id, pick()],
          );
          await sleep(writeLate ? 500 : 1000);
        });
        writes++;
      }
    };
    const reader = async () => {
      while (!stop) {
        await walk();
      }
    };
    const running = runTogether(
      [writer, slowWriter(false), slowWriter(false), slowWriter(true), slowWriter(true), reader],
      () => {
        stop = true;
      },
    );

    // Replicas lag behind writes: the walk before the pause already meets late commits.
    await sleep(3000);
    await replica.query('SELECT pg_wal_replay_pause()');
    for (
      let i = 0;
      (await replica.query('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0].s !== 'paused';
      i++
    ) {
      assert.ok(i < 100, 'replay did not pause');
      await sleep(20);
    }
    // Paused for real: a write acknowledged now is not readable through the service.
    const probe = unique('PAUSED');
    const put = await app.call('PUT', `/api/external/v1/listings/${probe}`, {
      secret: partner.secret,
      body: listingBody(),
    });
    assert.equal(put.status, 201, put.text);
    const unseen = await app.call('GET', `/api/external/v1/listings?status=all&externalReference=${probe}`, {
      secret: partner.secret,
    });
    assert.deepEqual(unseen.body.data, [], 'reads come from the paused replica');
    await sleep(2000);
    const writesWhilePaused = writes;
    await replica.query('SELECT pg_wal_replay_resume()');
    await sleep(1500);
    stop = true;
    await running.finish();
    assert.ok(writesWhilePaused > 10, `only ${writesWhilePaused} writes before the resume`);

    await caughtUp();
    await walk();
    const truth = (
      await primary.query(
        `SELECT id::text, status, price::float8 AS price, title,
                to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"
         FROM listings WHERE partner_id = $1`,
        [partner.id],
      )
    ).rows as (Synced & { id: string })[];
    assert.equal(copy.size, truth.length, 'the copy has every listing');
    for (const row of truth)
      assert.deepEqual(
        copy.get(row.id),
        { updatedAt: row.updatedAt, status: row.status, price: row.price, title: row.title },
        `listing ${row.id}`,
      );
    // The replica passed cursors on the horizon the primary published, not on the clock alone.
    const [{ published }] = (
      await replica.query(`SELECT horizon > now() - interval '1 minute' AS published FROM sync_horizon`)
    ).rows;
    assert.equal(published, true);
  });
});
