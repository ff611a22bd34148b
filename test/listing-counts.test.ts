import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { LIVE } from '../src/domain/access.js';
import { listingReadStore } from '../src/store/listings/reads.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { bulk, putOk, remove, setStatus } from './helpers/listings-api.js';
import { sql } from './helpers/read-fixtures.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * totalItems and location stats read trigger-kept counters (migration 004) instead of counting
 * listings. Whatever mix of writes runs, concurrently, the counters must equal a real count.
 */
describe('listing counters', () => {
  let app: TestApp;
  let tree: Tree;
  let secret: string;
  let dealers: string[];

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    ({ secret } = await writer(app, [tree.ids.A!, tree.ids.B!]));
    dealers = ['A1', 'A1a', 'A2', 'B1'].map((k) => tree.ids[k]!);
  });
  after(() => app.close());

  async function assertCountersExact(): Promise<void> {
    const counted = await sql(
      app,
      `SELECT dealer_profile_id::text AS d, status, count(*)::int AS n FROM listings
       WHERE dealer_profile_id = ANY($1::uuid[]) GROUP BY 1, 2 ORDER BY 1, 2`,
      [dealers],
    );
    const kept = await sql(
      app,
      `SELECT dealer_profile_id::text AS d, status, n::int AS n FROM listing_counts
       WHERE dealer_profile_id = ANY($1::uuid[]) AND n <> 0 ORDER BY 1, 2`,
      [dealers],
    );
    assert.deepEqual(kept, counted);
  }

  test('equal a real count after any concurrent mix of creates, updates, moves and status changes', async () => {
    const statuses = ['active', 'pending', 'sold', 'draft'] as const;
    const refs = Array.from({ length: 12 }, () => ref('cnt'));
    const item = fc.record({
      r: fc.constantFrom(...refs),
      d: fc.nat(dealers.length - 1),
      s: fc.constantFrom(...statuses),
    });
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('bulk' as const),
        items: fc.array(item, { minLength: 1, maxLength: 8 }),
      }),
      fc.record({ kind: fc.constant('put' as const), item }),
      fc.record({ kind: fc.constant('status' as const), item }),
      fc.record({ kind: fc.constant('delete' as const), item }),
    );
    const body = (i: { r: string; d: number; s: string }) =>
      listingBody({ externalReference: i.r, dealerProfileId: dealers[i.d], status: i.s });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 6 }), async (ops) => {
        // All at once: writers race for the same counter rows.
        await Promise.all(
          ops.map(async (o) => {
            if (o.kind === 'bulk') return bulk(app, secret, o.items.map(body));
            if (o.kind === 'put')
              return app.call('PUT', `${EXT}/listings/${o.item.r}`, { secret, body: body(o.item) });
            if (o.kind === 'status') return setStatus(app, secret, o.item.r, { status: o.item.s });
            return remove(app, secret, o.item.r);
          }),
        );
        await assertCountersExact();
      }),
      { numRuns: 25 },
    );
  });

  test('totalItems and location stats come out of them exactly', async () => {
    await putOk(app, secret, ref('cnt-x'), listingBody({ dealerProfileId: tree.ids.A2 }), 201);
    for (const status of ['active', 'sold', 'all']) {
      const [{ n }] = (await sql(
        app,
        `SELECT count(*)::int AS n FROM listings WHERE dealer_profile_id = ANY($1::uuid[]) AND ($2 = 'all' OR status = $2)`,
        [dealers, status],
      )) as [{ n: number }];
      const page = await app.call('GET', `${EXT}/listings?status=${status}&pageSize=1`, { secret });
      assert.equal(page.body.pagination.totalItems, n, status);
      // The total rides on the page's rows; a page past the last has none and asks for it alone.
      const past = await app.call('GET', `${EXT}/listings?status=${status}&pageSize=1&page=${n + 5}`, {
        secret,
      });
      assert.deepEqual(past.body.data, [], status);
      assert.equal(past.body.pagination.totalItems, n, `${status}, past the last page`);
    }
    const reader = await createPartner(app, { roots: [tree.ids.A!, tree.ids.B!], scopes: ALL_SCOPES });
    const locations = await app.call('GET', `${EXT}/locations?withCounts=true`, { secret: reader.secret });
    assert.equal(locations.status, 200, locations.text);
    const real = await sql(
      app,
      `SELECT dealer_profile_id::text AS id, count(*) FILTER (WHERE status = 'active')::int AS active, count(*)::int AS total
       FROM listings WHERE dealer_profile_id = ANY($1::uuid[]) GROUP BY 1`,
      [dealers],
    );
    assert.ok(real.length >= 2);
    for (const row of real) {
      const location = locations.body.data.find((l: { id: string }) => l.id === row.id);
      assert.equal(location.stats.activeListings, row.active);
      assert.equal(location.stats.totalListings, row.total);
    }
  });

  test('totalItems with updatedSince equals a real count at any point: before all, at each write, after all', async () => {
    // Three writes apart in time, with sold and active listings, so every side of every point differs.
    for (let round = 0; round < 3; round++) {
      const [a, b] = [ref(`since-${round}-a`), ref(`since-${round}-b`)];
      const written = await bulk(app, secret, [
        { externalReference: a, ...listingBody({ dealerProfileId: tree.ids.A1 }) },
        { externalReference: b, ...listingBody({ dealerProfileId: tree.ids.B1 }) },
      ]);
      assert.equal(written.status, 200, written.text);
      assert.equal((await setStatus(app, secret, b, { status: 'sold' })).status, 200);
    }
    const global = await createPartner(app, { global: true, scopes: ALL_SCOPES });
    const stamps = (await sql(
      app,
      // To the millisecond, as partners see and send times: the API reads updatedSince to the
      // millisecond, so a point in microseconds between two rows of one millisecond would count
      // one row more than the database does (it failed a run that wrote two rows within one).
      `SELECT DISTINCT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS t
       FROM listings ORDER BY 1`,
    )) as { t: string }[];
    const points = ['2000-01-01T00:00:00Z', ...stamps.map((r) => r.t).slice(-8), '2999-01-01T00:00:00Z'];
    for (const [who, key, scope] of [
      ['restricted', secret, dealers],
      ['global', global.secret, null],
    ] as const) {
      for (const status of ['all', 'active', 'sold']) {
        for (const since of points) {
          const [{ n }] = (await sql(
            app,
            `SELECT count(*)::int AS n FROM listings
             WHERE ($1::uuid[] IS NULL OR dealer_profile_id = ANY($1::uuid[])) AND ($2 = 'all' OR status = $2)
               AND updated_at >= $3::timestamptz`,
            [scope, status, since],
          )) as [{ n: number }];
          const page = await app.call(
            'GET',
            `${EXT}/listings?status=${status}&updatedSince=${encodeURIComponent(since)}&pageSize=1`,
            { secret: key },
          );
          assert.equal(page.status, 200, page.text);
          assert.equal(page.body.pagination.totalItems, n, `${who} status=${status} updatedSince=${since}`);
          // Every way of counting (a probe of 1 row makes the other sides run), the same number.
          for (const probe of [1, 3]) {
            const store = listingReadStore(app.running.db, probe);
            const filter = {
              mode: LIVE,
              profileIds: scope,
              status: status === 'all' ? null : status,
              updatedSince: new Date(since),
              partnerId: null,
              reference: null,
            };
            // Date keeps milliseconds only: compare with the count at that millisecond.
            const [{ m }] = (await sql(
              app,
              `SELECT count(*)::int AS m FROM listings
               WHERE ($1::uuid[] IS NULL OR dealer_profile_id = ANY($1::uuid[])) AND ($2 = 'all' OR status = $2)
                 AND updated_at >= $3::timestamptz`,
              [scope, status, new Date(since).toISOString()],
            )) as [{ m: number }];
            assert.equal(await store.count(filter), m, `probe ${probe}, ${who} ${status} ${since}`);
          }
        }
      }
    }
  });
});
