import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pgliteMaintenance } from '../src/store/pglite-maintenance.js';
import { bootApp, createTree, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { bulkUpsert } from './helpers/listings-api.js';
import { sql } from './helpers/read-fixtures.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * The embedded database runs PostgreSQL in single-user mode, where autovacuum never runs: the
 * service does its work (store/pglite-maintenance.ts). What a user would notice without it: the
 * data directory growing with every update, for ever. PostgreSQL has autovacuum of its own.
 */
describe('the embedded database vacuums and analyzes itself', { skip: !!process.env.DATABASE_URL }, () => {
  let app: TestApp;
  let secret: string;
  const refs = Array.from({ length: 100 }, () => ref('vac'));
  let round = 0;

  before(async () => {
    // Passes are run by the test itself here; the scheduled ones have a test of their own below.
    app = await bootApp({ EMBEDDED_VACUUM_INTERVAL_MS: '0' });
    const tree = await createTree(app);
    ({ secret } = await writer(app, [tree.ids.A!]));
  });
  after(() => app.close());

  /** Rewrites every listing once (a new price each round: a real update, a dead row each). */
  async function rewriteAll(): Promise<void> {
    round += 1;
    await bulkUpsert(
      app,
      secret,
      refs.map((externalReference) => listingBody({ externalReference, price: 10_000 + round })),
    );
  }

  const heapPages = async (): Promise<number> =>
    Number((await sql(app, `SELECT pg_relation_size('listings') / 8192 AS pages`))[0]!.pages);

  test('without a pass every update takes new space; with one the space is reused', async () => {
    await rewriteAll();
    const pass = pgliteMaintenance(app.running.db);
    // The first pass of a process vacuums every table (the counters behind the thresholds start at
    // zero with each process) and analyzes what was never analyzed.
    const first = await pass();
    assert.ok(first.vacuumed.includes('public.listings'), JSON.stringify(first));
    assert.ok(first.vacuumed.includes('public.listing_counts'), JSON.stringify(first));
    assert.ok(first.analyzed.includes('public.listings'), JSON.stringify(first));
    const stats = await sql(app, `SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'listings'`);
    assert.ok(stats[0]!.n > 0, 'the planner has statistics for listings');
    assert.deepEqual((await pass()).vacuumed, [], 'nothing is due right after a pass');

    // No pass: each round of 100 updates lands in new pages.
    const start = await heapPages();
    for (let i = 0; i < 4; i++) await rewriteAll();
    const grown = await heapPages();
    assert.ok(grown > start, `the table grew without a pass (${start} → ${grown} pages)`);

    // A pass after each round: the space of the round before is free again and taken first.
    const passes: string[][] = [];
    for (let i = 0; i < 8; i++) {
      passes.push((await pass()).vacuumed);
      await rewriteAll();
    }
    assert.ok(
      passes.every((vacuumed) => vacuumed.includes('public.listings')),
      `each round's 100 dead rows are past the threshold: ${JSON.stringify(passes)}`,
    );
    const after = await heapPages();
    assert.ok(after <= grown, `eight rounds with passes took no new space (${grown} → ${after} pages)`);
  });

  test('a pass analyzes a table changed by more than a tenth, at most every ten minutes', async () => {
    let clock = 0;
    const pass = pgliteMaintenance(app.running.db, () => clock);
    await pass();
    const changed = async () =>
      (
        await sql(
          app,
          `SELECT n_mod_since_analyze::int AS n FROM pg_stat_user_tables WHERE relname = 'listings'`,
        )
      )[0]!.n;
    assert.equal(await changed(), 0, 'the first pass analyzed listings');
    await rewriteAll();
    clock += 9 * 60_000;
    const soon = await pass();
    assert.ok(
      !soon.analyzed.includes('public.listings'),
      `not again within ten minutes: ${JSON.stringify(soon)}`,
    );
    assert.ok((await changed()) > 0);
    clock += 60_000;
    const later = await pass();
    assert.ok(later.analyzed.includes('public.listings'), JSON.stringify(later));
    assert.equal(await changed(), 0);
  });
});

describe('the scheduled pass', { skip: !!process.env.DATABASE_URL }, () => {
  let app: TestApp;
  before(async () => {
    app = await bootApp({ EMBEDDED_VACUUM_INTERVAL_MS: '200' });
  });
  after(() => app.close());

  test('runs on its own every EMBEDDED_VACUUM_INTERVAL_MS: once at start, then when rows died', async () => {
    let vacuums = 0;
    const vacuumedAtLeast = (n: number) =>
      eventually(
        async () => {
          const rows = await sql(
            app,
            `SELECT vacuum_count AS n FROM pg_stat_user_tables WHERE relname = 'listings'`,
          );
          vacuums = Number(rows[0]!.n);
          return vacuums >= n;
        },
        () => `listings vacuumed ${vacuums} times, ${n} expected`,
        10_000,
      );
    await vacuumedAtLeast(1);
    const tree = await createTree(app);
    const { secret } = await writer(app, [tree.ids.A!]);
    const refs = Array.from({ length: 100 }, () => ref('vac'));
    for (const price of [1000, 2000])
      await bulkUpsert(
        app,
        secret,
        refs.map((externalReference) => listingBody({ externalReference, price })),
      );
    await vacuumedAtLeast(2);
  });
});

// On either database: both analyze listings (PostgreSQL's autovacuum, the embedded pass).
describe('planner statistics on listings', () => {
  test('statistics are kept for the columns statements filter and sort on only (migration 013)', async () => {
    const app = await bootApp();
    try {
      // Statistics (a target other than 0) on exactly the columns statements filter, join or sort on.
      const kept = await sql(
        app,
        `SELECT attname FROM pg_attribute
       WHERE attrelid = 'listings'::regclass AND attnum > 0 AND NOT attisdropped
         AND coalesce(attstattarget, -1) <> 0
       ORDER BY attname`,
      );
      assert.deepEqual(
        kept.map((c) => c.attname),
        [
          // changed_at: the sync position, which cursor walks sort on (migration 021).
          'changed_at',
          'created_at',
          'dealer_profile_id',
          'external_reference',
          'id',
          'partner_id',
          'price',
          'status',
          // test: every listing read filters on its mode (migration 024, docs/test-mode.md).
          'test',
          'updated_at',
        ],
      );
    } finally {
      await app.close();
    }
  });
});
