import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@forecourt/client';
import { TEST_LISTING_LIMIT } from '../src/domain/test-data.js';
import { requestRecordStore } from '../src/store/request-records.js';
import { testDataStore } from '../src/store/test-data.js';
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
import {
  allListings,
  allPages,
  bulkUpsert,
  getListing,
  put,
  putListing,
  setStatus,
} from './helpers/listings-api.js';
import { assertError, sorted, sql } from './helpers/read-fixtures.js';

/**
 * Test mode (docs/test-mode.md), in the manner of the authorization matrix: the same partner with
 * its live and its test secret, and a second partner with both, write beside each other; every
 * read in each mode (lists, counts, GET by id, by reference, cursor walks, location statistics)
 * shows exactly that mode's listings of the caller, and nothing crosses in either direction.
 */
const MERGE = 'application/merge-patch+json';
const SCOPES = [...ALL_SCOPES, 'read:locations'];

describe('test mode', () => {
  let app: TestApp;
  let tree: Tree;
  /** Partner P (restricted to group A) and Q (global): each with a live and a test secret. */
  const p = { id: '', live: '', test: '' };
  const q = { id: '', live: '', test: '' };
  const live: Record<string, string> = {};
  const tested: Record<string, string> = {};

  const issueTest = async (id: string): Promise<string> =>
    (await app.admin<{ secret: string }>('POST', `/partners/${id}/test-secret`)).secret;
  const ids = async (secret: string, path = '/listings?status=all') => {
    const items: { id: string }[] = [];
    let cursor: string | undefined;
    // A cursor walk of one listing a page: every page and every cursor of the mode.
    for (let n = 0; n < 100; n++) {
      const sep = path.includes('?') ? '&' : '?';
      const reply = await app.call(
        'GET',
        `${EXT}${path}${sep}pageSize=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { secret },
      );
      assert.equal(reply.status, 200, reply.text);
      items.push(...reply.body.data);
      if (!reply.body.pagination.hasMore) return sorted(items.map((i) => i.id));
      cursor = reply.body.pagination.nextCursor;
    }
    throw new Error('walk did not end');
  };
  const total = async (secret: string, query: string) => {
    const reply = await app.call('GET', `${EXT}/listings?${query}`, { secret });
    assert.equal(reply.status, 200, reply.text);
    return reply.body.pagination.totalItems as number;
  };

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    const pCreated = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
    p.id = pCreated.id;
    p.live = pCreated.secret;
    const qCreated = await createPartner(app, { global: true, scopes: SCOPES });
    q.id = qCreated.id;
    q.live = qCreated.secret;
    p.test = await issueTest(p.id);
    q.test = await issueTest(q.id);

    live.pShared = await putListing(
      app,
      p.live,
      'shared-ref',
      listingBody({ dealerProfileId: tree.ids.A1, price: 10_000 }),
    );
    live.pOnly = await putListing(app, p.live, 'live-only', listingBody({ dealerProfileId: tree.ids.A2 }));
    live.qLive = await putListing(app, q.live, 'q-live', listingBody({ dealerProfileId: tree.ids.A1 }));

    // The live reference written in test mode: a new test listing, the live one untouched.
    const created = await put(
      app,
      p.test,
      'shared-ref',
      listingBody({ dealerProfileId: tree.ids.A1, price: 20_000 }),
    );
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers['forecourt-mode'], 'test');
    tested.pShared = created.body.data.listingId;
    const batch = await bulkUpsert(app, p.test, [
      { externalReference: 't1', ...listingBody({ dealerProfileId: tree.ids.A2 }) },
      { externalReference: 't2', ...listingBody({ dealerProfileId: tree.ids.A1a }) },
    ]);
    tested.t1 = batch.t1!;
    tested.t2 = batch.t2!;
    tested.qTest = await putListing(app, q.test, 'q-test', listingBody({ dealerProfileId: tree.ids.B1 }));
  });
  after(() => app?.close());

  test('a test secret is told apart from a live one, and answers say the mode', async () => {
    assert.match(p.test, /^fc_test_[0-9A-Za-z]{46}$/);
    assert.match(p.live, /^fc_[0-9A-Za-z]{46}$/);
    const liveReply = await app.call('GET', `${EXT}/listings`, { secret: p.live });
    assert.equal(liveReply.headers['forecourt-mode'], undefined);
    // A test secret with a broken checksum is malformed, as a live one is.
    const broken = `${p.test.slice(0, -1)}${p.test.endsWith('A') ? 'B' : 'A'}`;
    const reply = await app.call('GET', `${EXT}/listings`, { secret: broken });
    assertError(reply, 401, 'UNAUTHORIZED');
    assert.match(reply.body.error.message, /malformed/);
  });

  test('lists, counts and cursor walks: each mode sees exactly its own listings', async () => {
    const liveP = [live.pShared!, live.pOnly!, live.qLive!];
    assert.deepEqual(await ids(p.live), sorted(liveP));
    assert.deepEqual(await ids(q.live), sorted(liveP));
    assert.deepEqual(await ids(p.test), sorted([tested.pShared!, tested.t1!, tested.t2!]));
    assert.deepEqual(await ids(q.test), [tested.qTest]);
    // The same through page numbers, sorted otherwise, and the list of all.
    assert.deepEqual(sorted((await allListings(app, p.test)).map((l) => l.id)), await ids(p.test));
    assert.deepEqual(
      sorted((await allPages(app, p.test, '/listings?status=all&sort=-price')).map((l) => l.id)),
      await ids(p.test),
    );
    // Counts (the live ones from the counters, the test ones counted).
    assert.equal(await total(p.live, 'status=active'), 3);
    assert.equal(await total(q.live, `status=all&dealerId=${tree.ids.A1}`), 2);
    assert.equal(await total(p.test, 'status=active'), 3);
    assert.equal(await total(p.test, `status=all&dealerId=${tree.ids.A1}`), 1);
    assert.equal(await total(q.test, 'status=all'), 1);
    assert.equal(
      await total(p.test, `status=all&updatedSince=${encodeURIComponent('2000-01-01T00:00:00Z')}`),
      3,
    );
    assert.equal(
      await total(p.live, `status=all&updatedSince=${encodeURIComponent('2000-01-01T00:00:00Z')}`),
      3,
    );
    // A recent point: the side counts read listings beside the counters, live ones only.
    const now = encodeURIComponent(new Date().toISOString());
    assert.equal(await total(p.live, `status=all&updatedSince=${now}`), 0);
    assert.equal(await total(q.live, `status=all&updatedSince=${now}`), 0);
    assert.equal(await total(p.test, `status=all&updatedSince=${now}`), 0);
    assert.equal(await total(p.test, 'mine=true&status=all'), 3);
    assert.equal(await total(q.test, 'mine=true&status=all'), 1);
    // A location's listings.
    assert.deepEqual(
      await ids(p.test, `/locations/${tree.ids.A1}/listings?status=all&includeChildren=true`),
      sorted([tested.pShared!, tested.t2!]),
    );
    assert.deepEqual(
      await ids(p.live, `/locations/${tree.ids.A1}/listings?status=all&includeChildren=true`),
      sorted([live.pShared!, live.qLive!]),
    );
  });

  test('by reference and by id: the same reference names one listing per mode', async () => {
    const byRef = async (secret: string) => {
      const reply = await app.call('GET', `${EXT}/listings?externalReference=shared-ref&status=all`, {
        secret,
      });
      assert.equal(reply.status, 200, reply.text);
      return reply.body.data.map((l: { id: string; price: number }) => [l.id, l.price]);
    };
    assert.deepEqual(await byRef(p.live), [[live.pShared, 10_000]]);
    assert.deepEqual(await byRef(p.test), [[tested.pShared, 20_000]]);
    for (const id of Object.values(tested)) assert.equal(await getListing(app, p.live, id), undefined, id);
    for (const id of Object.values(tested)) assert.equal(await getListing(app, q.live, id), undefined, id);
    for (const id of Object.values(live)) assert.equal(await getListing(app, p.test, id), undefined, id);
    // Another partner's test listing is not the caller's test data.
    assert.equal(await getListing(app, p.test, tested.qTest!), undefined);
    assert.equal(await getListing(app, q.test, tested.pShared!), undefined);
    assert.equal((await getListing(app, p.test, tested.pShared!)).price, 20_000);
    assert.equal((await getListing(app, p.live, live.pShared!)).price, 10_000);
  });

  test('writes in test mode never reach a live listing, and the reverse', async () => {
    // A live reference that has no test listing: PATCH and status in test mode find nothing.
    const patched = await app.call('PATCH', `${EXT}/listings/live-only`, {
      secret: p.test,
      raw: JSON.stringify({ mileage: 5 }),
      headers: { 'content-type': MERGE },
    });
    assertError(patched, 404, 'NOT_FOUND');
    assertError(await setStatus(app, p.test, 'live-only', { status: 'sold' }), 404, 'NOT_FOUND');
    assertError(await app.call('DELETE', `${EXT}/listings/live-only`, { secret: p.test }), 404, 'NOT_FOUND');
    // And a test-only reference from live.
    assertError(await setStatus(app, p.live, 't1', { status: 'sold' }), 404, 'NOT_FOUND');
    // PATCH, status and sold in test mode change the test listing only.
    const ok = await app.call('PATCH', `${EXT}/listings/shared-ref`, {
      secret: p.test,
      raw: JSON.stringify({ mileage: 12_345 }),
      headers: { 'content-type': MERGE },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await setStatus(app, p.test, 'shared-ref', { status: 'pending' })).status, 200);
    assert.equal((await app.call('DELETE', `${EXT}/listings/t1`, { secret: p.test })).status, 200);
    const liveShared = await getListing(app, p.live, live.pShared!);
    assert.equal(liveShared.status, 'active');
    assert.notEqual(liveShared.mileage, 12_345);
    assert.equal((await getListing(app, p.test, tested.pShared!)).status, 'pending');
    assert.equal((await getListing(app, p.test, tested.t1!)).status, 'sold');
    // Live counts did not move; test counts did.
    assert.equal(await total(p.live, 'status=active'), 3);
    assert.equal(await total(p.live, 'status=sold'), 0);
    assert.equal(await total(p.test, 'status=sold'), 1);
    assert.equal(await total(p.test, 'status=active'), 1);
    // The status history is the live locations' statistics: test listings have none.
    const [history] = await sql(
      app,
      'SELECT count(*)::int AS n FROM listing_status_history h JOIN listings l ON l.id = h.listing_id WHERE l.test',
    );
    assert.equal(history!.n, 0);
  });

  test("location statistics: live counts only live listings, test only the caller's test ones", async () => {
    const stats = async (secret: string) => {
      const reply = await app.call('GET', `${EXT}/locations?includeChildren=true&withCounts=true`, {
        secret,
      });
      assert.equal(reply.status, 200, reply.text);
      return new Map(reply.body.data.map((l: any) => [l.id, l.stats]));
    };
    const liveStats = await stats(p.live);
    const [counted] = await sql(
      app,
      `SELECT count(*) FILTER (WHERE status = 'active')::int AS active, count(*)::int AS total
       FROM listings WHERE NOT test AND dealer_profile_id = $1`,
      [tree.ids.A1],
    );
    assert.equal((liveStats.get(tree.ids.A1) as any).activeListings, counted!.active);
    assert.equal((liveStats.get(tree.ids.A1) as any).totalListings, counted!.total);
    const testStats = await stats(p.test);
    const [own] = await sql(
      app,
      `SELECT count(*) FILTER (WHERE status = 'active')::int AS active, count(*)::int AS total
       FROM listings WHERE test AND partner_id = $2 AND dealer_profile_id = $1`,
      [tree.ids.A1, p.id],
    );
    assert.ok(own!.total > 0);
    assert.equal((testStats.get(tree.ids.A1) as any).activeListings, own!.active);
    assert.equal((testStats.get(tree.ids.A1) as any).totalListings, own!.total);
    // Q's test listing is at B1: not in its live statistics.
    const qLive = await stats(q.live);
    assert.equal((qLive.get(tree.ids.B1) as any).totalListings, 0);
    assert.equal(((await stats(q.test)).get(tree.ids.B1) as any).totalListings, 1);
  });

  test('@forecourt/client works with a test secret unchanged', async () => {
    const forecourt = createClient({ baseUrl: app.url, secret: q.test, dispatcher: app.dispatcher });
    const written = await forecourt.listings.put('client-ref', {
      title: 'Golf',
      price: 1000,
      dealerProfileId: tree.ids.B!,
    });
    const walked: string[] = [];
    for await (const listing of forecourt.listings.iterate({ status: 'all' })) walked.push(listing.id);
    assert.deepEqual(walked.sort(), sorted([tested.qTest!, written.listingId]));
    assert.equal((await forecourt.listings.get(written.listingId)).externalReference, 'client-ref');
    // The same reference live: unknown there.
    const live = createClient({ baseUrl: app.url, secret: q.live, dispatcher: app.dispatcher });
    await assert.rejects(live.listings.get(written.listingId));
    await forecourt.listings.remove('client-ref');
    await sql(app, 'DELETE FROM listings WHERE id = $1', [written.listingId]);
  });

  test('a cursor belongs to its mode', async () => {
    const first = await app.call('GET', `${EXT}/listings?status=all&pageSize=1`, { secret: p.test });
    const cursor = first.body.pagination.nextCursor as string;
    const crossed = await app.call(
      'GET',
      `${EXT}/listings?status=all&pageSize=1&cursor=${encodeURIComponent(cursor)}`,
      {
        secret: p.live,
      },
    );
    assertError(crossed, 400, 'INVALID_QUERY');
    const liveFirst = await app.call('GET', `${EXT}/listings?status=all&pageSize=1`, { secret: p.live });
    const back = await app.call(
      'GET',
      `${EXT}/listings?status=all&pageSize=1&cursor=${encodeURIComponent(liveFirst.body.pagination.nextCursor)}`,
      { secret: p.test },
    );
    assertError(back, 400, 'INVALID_QUERY');
  });

  test('scopes and access are the live secret’s', async () => {
    // P is restricted to group A in test mode too.
    const outside = await put(app, p.test, 'outside', listingBody({ dealerProfileId: tree.ids.B }));
    assertError(outside, 403, 'PROFILE_FORBIDDEN');
    const reader = await createPartner(app, { global: true, scopes: ['read:listings'] });
    const readerTest = await issueTest(reader.id);
    assertError(
      await put(app, readerTest, 'x', listingBody({ dealerProfileId: tree.ids.A })),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  test('wipe: test secret only; deletes the caller’s test data and nothing else', async () => {
    const refused = await app.call('DELETE', `${EXT}/test-data`, { secret: p.live });
    assertError(refused, 403, 'TEST_MODE_ONLY');
    assert.equal((await ids(p.test)).length, 3);
    const wiped = await app.call('DELETE', `${EXT}/test-data`, { secret: p.test });
    assert.equal(wiped.status, 200, wiped.text);
    assert.deepEqual(wiped.body.data, { deleted: 3 });
    assert.deepEqual(await ids(p.test), []);
    assert.equal(await total(p.test, 'status=all'), 0);
    assert.deepEqual(await ids(p.live), sorted([live.pShared!, live.pOnly!, live.qLive!]));
    assert.deepEqual(await ids(q.test), [tested.qTest]);
    // The reference is free again in test mode.
    const again = await put(app, p.test, 'shared-ref', listingBody({ dealerProfileId: tree.ids.A1 }));
    assert.equal(again.status, 201, again.text);
  });

  test('a wiped listing takes its image links with it; a live one sharing the URL keeps its own', async () => {
    // listing_images has no foreign key since migration 036: a statement trigger does its cascade.
    const images = ['https://cdn.example/wipe/1.jpg', 'https://cdn.example/wipe/2.jpg'];
    const testId = await putListing(
      app,
      p.test,
      'wipe-images',
      listingBody({ dealerProfileId: tree.ids.A1, images }),
    );
    const liveId = await putListing(
      app,
      p.live,
      'wipe-images',
      listingBody({ dealerProfileId: tree.ids.A1, images }),
    );
    const links = async (id: string) =>
      (await sql(app, 'SELECT url FROM listing_images WHERE listing_id = $1 ORDER BY url', [id])).map(
        (r) => r.url,
      );
    assert.deepEqual(await links(testId), images);
    const wiped = await app.call('DELETE', `${EXT}/test-data`, { secret: p.test });
    assert.deepEqual(wiped.body.data, { deleted: 2 }, wiped.text);
    assert.deepEqual(await links(testId), []);
    assert.deepEqual(await links(liveId), images);
    const orphans = await sql(
      app,
      'SELECT count(*)::int AS n FROM listing_images li WHERE NOT EXISTS (SELECT 1 FROM listings l WHERE l.id = li.listing_id)',
    );
    assert.equal(orphans[0]!.n, 0);
  });

  test('test data has a bounded size per partner', async () => {
    const partner = await createPartner(app, { global: true, scopes: SCOPES });
    const secret = await issueTest(partner.id);
    await putListing(app, secret, 'seed', listingBody({ dealerProfileId: tree.ids.B }));
    // Up to one below the limit, written in SQL (thousands of HTTP writes would only be slow), in
    // batches: each row's read model is built by the trigger, and 9,998 in one statement ran past
    // the 10 s statement timeout on CI's loaded PostgreSQL pass.
    const BATCH = 2_000;
    for (let from = 1; from <= TEST_LISTING_LIMIT - 2; from += BATCH)
      await sql(
        app,
        `INSERT INTO listings (id, partner_id, test, external_reference, slug, dealer_profile_id, status, title, price)
         SELECT gen_random_uuid(), $1::uuid, true, 'bulk-' || n, 'test-mode-bulk-' || $1::text || '-' || n, $2::uuid,
                'active', 'Golf', 1000
         FROM generate_series($3::int, $4::int) AS n`,
        [partner.id, tree.ids.B, from, Math.min(from + BATCH - 1, TEST_LISTING_LIMIT - 2)],
      );
    const two = [
      { externalReference: 'n1', ...listingBody({ dealerProfileId: tree.ids.B }) },
      { externalReference: 'n2', ...listingBody({ dealerProfileId: tree.ids.B }) },
    ];
    const over = await app.call('POST', `${EXT}/listings/bulk-upsert`, { secret, body: two });
    assertError(over, 422, 'TEST_LIMIT_REACHED');
    // Nothing of the refused batch was written; updates and the last free place still work.
    assert.equal(await total(secret, 'status=all'), TEST_LISTING_LIMIT - 1);
    assert.equal(
      (await put(app, secret, 'seed', listingBody({ dealerProfileId: tree.ids.B, price: 1 }))).status,
      200,
    );
    // Two new references racing for the last free place: one gets it, the other is refused.
    const raced = await Promise.all(
      ['n1', 'n3'].map((ref) => put(app, secret, ref, listingBody({ dealerProfileId: tree.ids.B }))),
    );
    assert.deepEqual(raced.map((r) => r.status).sort(), [201, 422], raced.map((r) => r.text).join('\n'));
    assert.equal(await total(secret, 'status=all'), TEST_LISTING_LIMIT);
    assertError(
      await put(app, secret, 'n2', listingBody({ dealerProfileId: tree.ids.B })),
      422,
      'TEST_LIMIT_REACHED',
    );
    // Live writes of the same partner have no such limit.
    assert.equal(
      (await put(app, partner.secret, 'n2', listingBody({ dealerProfileId: tree.ids.B }))).status,
      201,
    );
    await app.call('DELETE', `${EXT}/test-data`, { secret });
  });

  test('test data untouched past its expiry is deleted; fresh test data and live data stay', async () => {
    const stale = await createPartner(app, { global: true, scopes: SCOPES });
    const staleSecret = await issueTest(stale.id);
    await bulkUpsert(app, staleSecret, [
      { externalReference: 's1', ...listingBody({ dealerProfileId: tree.ids.B }) },
      { externalReference: 's2', ...listingBody({ dealerProfileId: tree.ids.B1 }) },
    ]);
    const staleLive = await putListing(app, stale.secret, 's1', listingBody({ dealerProfileId: tree.ids.B }));
    // Its test listings last written 31 days ago (changed_at follows an earlier updated_at).
    await sql(app, `UPDATE listings SET updated_at = now() - interval '31 days' WHERE partner_id = $1`, [
      stale.id,
    ]);
    const store = testDataStore(app.running.db);
    // The admin read waits for the request recorder: the bulk upsert's test use is written.
    const tried = await app.admin('GET', `/partners/${stale.id}/test-use`);
    assert.ok(tried.written, 'the bulk upsert counted as a test write');
    // A test request in the last 30 days (the bulk's, here) keeps the data: it is in use.
    assert.deepEqual(await store.expire(30), []);
    // Its test use aged too, but a delivery to a test endpoint 1 day ago: the service's doing, not
    // the partner's touch.
    await sql(app, `UPDATE partner_test_use SET last_at = now() - interval '31 days' WHERE partner_id = $1`, [
      stale.id,
    ]);
    await sql(
      app,
      `INSERT INTO partner_test_use (partner_id, activity, requests, first_at, last_at)
       VALUES ($1, 'webhook', 1, now() - interval '1 day', now() - interval '1 day')`,
      [stale.id],
    );
    // And the service changed its listings today (as an image check's result rewrites the stored
    // text): changed_at moves, updated_at, the partner's own, does not. Not a touch either.
    await sql(
      app,
      `UPDATE listings SET read_json = read_json || ' ', read_json_tail = read_json_tail || ' '
       WHERE partner_id = $1 AND test`,
      [stale.id],
    );
    const [moved] = await sql(
      app,
      `SELECT bool_and(changed_at > now() - interval '1 hour') AS recent FROM listings WHERE partner_id = $1 AND test`,
      [stale.id],
    );
    assert.equal(moved!.recent, true, 'the service-side change moved changed_at');
    const expired = await store.expire(30);
    assert.deepEqual(expired, [{ partnerId: stale.id, deleted: 2 }]);
    assert.equal(await total(staleSecret, 'status=all'), 0);
    assert.ok(await getListing(app, stale.secret, staleLive));
    assert.deepEqual(await ids(q.test), [tested.qTest]);
  });

  test('what a partner tried in test outlives a shorter retention of the records: expiry reads it', async () => {
    const partner = await createPartner(app, { global: true, scopes: SCOPES });
    const day = 86_400_000;
    await sql(
      app,
      `INSERT INTO partner_test_use (partner_id, activity, requests, first_at, last_at) VALUES
         ($1, 'read', 1, now() - interval '40 days', now() - interval '10 days'),
         ($1, 'write', 1, now() - interval '40 days', now() - interval '40 days')`,
      [partner.id],
    );
    // The records' retention is 7 days; test use is kept 30 (what the recorder passes).
    const iso = (ago: number) => new Date(Date.now() - ago).toISOString();
    await requestRecordStore(app.running.db).deleteBefore(iso(7 * day), 10_000, iso(30 * day));
    const kept = await sql(app, 'SELECT activity FROM partner_test_use WHERE partner_id = $1', [partner.id]);
    assert.deepEqual(
      kept.map((r) => r.activity),
      ['read'],
    );
  });

  test('test requests have a rate-limit budget of their own, of the same size', async () => {
    const partner = await createPartner(app, { global: true, scopes: SCOPES });
    const secret = await issueTest(partner.id);
    await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 2 });
    for (let i = 0; i < 2; i++) {
      assert.equal((await app.call('GET', `${EXT}/listings`, { secret: partner.secret })).status, 200);
    }
    // Two live requests spent the live budget (or a new minute began): the test budget is whole.
    const first = await app.call('GET', `${EXT}/listings`, { secret });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers['ratelimit-limit'], '2');
    assert.equal(first.headers['ratelimit-remaining'], '1');
  });

  test('request records mark test traffic; test use is not the live secret’s use', async () => {
    const partner = await createPartner(app, { global: true, scopes: SCOPES });
    const secret = await issueTest(partner.id);
    const failed = await setStatus(app, secret, 'no-such-ref', { status: 'sold' });
    assertError(failed, 404, 'NOT_FOUND');
    const liveFailed = await setStatus(app, partner.secret, 'no-such-ref-live', { status: 'sold' });
    assertError(liveFailed, 404, 'NOT_FOUND');
    const records = async (as: string) => {
      const reply = await app.call('GET', `${EXT}/requests`, { secret: as });
      assert.equal(reply.status, 200, reply.text);
      return new Map(reply.body.data.map((r: { requestId: string; test: boolean }) => [r.requestId, r.test]));
    };
    // Each secret reads its own mode's records, marked as such; the operator reads both, marked.
    assert.deepEqual([...(await records(secret))], [[failed.headers['x-request-id'], true]]);
    assert.deepEqual([...(await records(partner.secret))], [[liveFailed.headers['x-request-id'], false]]);
    const operator = await app.admin<{ requestId: string; test: boolean }[]>(
      'GET',
      `/requests?partnerId=${partner.id}`,
    );
    assert.deepEqual(
      new Map(operator.map((r) => [r.requestId, r.test])),
      new Map([
        [failed.headers['x-request-id'], true],
        [liveFailed.headers['x-request-id'], false],
      ]),
    );
    // Only test requests so far from a fresh partner: its live secret was never used.
    const fresh = await createPartner(app, { global: true, scopes: SCOPES });
    const freshTest = await issueTest(fresh.id);
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: freshTest })).status, 200);
    const viewed = await app.admin<{ lastUsedAt: string | null }>('GET', `/partners/${fresh.id}`);
    assert.equal(viewed.lastUsedAt, null);
  });

  test('the operator revokes and replaces test secrets; a disabled partner’s is refused', async () => {
    const partner = await createPartner(app, { global: true, scopes: SCOPES });
    const first = await issueTest(partner.id);
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: first })).status, 200);
    const second = await issueTest(partner.id);
    assertError(await app.call('GET', `${EXT}/listings`, { secret: first }), 401, 'UNAUTHORIZED');
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: second })).status, 200);
    // Rotating the live secret leaves the test secret alone.
    await app.admin('POST', `/partners/${partner.id}/rotate-secret`);
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: second })).status, 200);
    await app.admin('PATCH', `/partners/${partner.id}`, { disabled: true });
    assertError(await app.call('GET', `${EXT}/listings`, { secret: second }), 401, 'UNAUTHORIZED');
    await app.admin('PATCH', `/partners/${partner.id}`, { disabled: false });
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: second })).status, 200);
    assert.ok(
      (await app.admin<{ testSecretIssuedAt: string | null }>('GET', `/partners/${partner.id}`))
        .testSecretIssuedAt,
    );
    const revoked = await app.admin('DELETE', `/partners/${partner.id}/test-secret`);
    assert.equal(
      (await app.admin<{ testSecretIssuedAt: string | null }>('GET', `/partners/${partner.id}`))
        .testSecretIssuedAt,
      null,
    );
    assert.deepEqual(revoked, { id: partner.id, revoked: true });
    assertError(await app.call('GET', `${EXT}/listings`, { secret: second }), 401, 'UNAUTHORIZED');
    const again = await app.call('DELETE', `/api/admin/v1/partners/${partner.id}/test-secret`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(again.status, 404);
  });
});
