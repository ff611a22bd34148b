import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { bulkUpsert, setStatusOk } from './helpers/listings-api.js';
import {
  assertError,
  assertInvalidQuery,
  assertPagination,
  byKeyThenId,
  DAY_MS,
  getOk,
  ids,
  idsOf,
  meanActiveAtDayEnds,
  pinTimes,
  previousMonthUtc,
  qs,
  type Seeded,
  seedListings,
  sorted,
  sql,
  unknownId,
} from './helpers/read-fixtures.js';

type Params = Record<string, string | number>;
const T0 = Date.parse('2022-05-06T08:00:00.000Z');
// Listings per location: A has none of its own; A1's own differ from its children's.
const PLAN: [string, string, number][] = [
  ['A1', 'active', 11000],
  ['A1', 'active', 12000],
  ['A1', 'pending', 13000],
  ['A1', 'sold', 14000],
  ['A1', 'draft', 9000],
  ['A1a', 'active', 21000],
  ['A1a', 'sold', 22000],
  ['A1a1', 'pending', 31000],
  ['A2', 'active', 41000],
  ['B', 'active', 51000],
];
/** A's subtree: the helper tree, A1a1 under A1a, and twins T1, T2 under A2 sharing a display name. */
const SUBTREE_A = ['A', 'A1', 'A1a', 'A1a1', 'A2', 'T1', 'T2'];

describe('GET /locations and GET /locations/{id}/listings', () => {
  let app: TestApp;
  let tree: Tree;
  const id: Record<string, string> = {};
  const names: Record<string, string> = {};
  let writer: string;
  let partnerA: string;
  let partnerAB: string;
  let global: string;
  let historyStart: Date;
  let rows: Seeded[] = [];

  const locations = (secret: string, params: Params = {}) => getOk(app, secret, `/locations${qs(params)}`);
  /** Expected order of these locations: displayName, then id. */
  const ordered = (...keys: string[]) =>
    keys
      .map((k) => ({ id: id[k]!, name: names[k]! }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1))
      .map((l) => l.id);
  const listingsAt = (...dealers: string[]) => idsOf(rows, (r) => dealers.includes(r.dealer));

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    Object.assign(id, tree.ids);
    for (const key of Object.keys(tree.ids)) names[key] = `Dealer ${key}`;
    const add = async (key: string, parent: string, displayName: string, extra = {}) => {
      const body = { locationCode: unique(key), parentId: id[parent], displayName, city: 'Gent', ...extra };
      id[key] = (await app.admin<{ id: string }>('POST', '/dealers', body)).id;
      names[key] = displayName;
    };
    await add('A1a1', 'A1a', 'Dealer A1a1', { fullName: 'Fleet Corner' });
    await add('T1', 'A2', 'Dealer A2 twin', { fullName: 'İZMİR OTO' });
    await add('T2', 'A2', 'Dealer A2 twin');
    writer = (await createPartner(app, { roots: [id.A!, id.B!], scopes: ALL_SCOPES })).secret;
    partnerA = (await createPartner(app, { roots: [id.A!] })).secret;
    partnerAB = (await createPartner(app, { roots: [id.A!, id.B!] })).secret;
    global = (await createPartner(app, { global: true })).secret;
    historyStart = (await sql(app, 'SELECT history_started_at FROM service_info'))[0]!.history_started_at;
    // Distinct updatedAt values, in an order unlike the plan's.
    const plan = PLAN.map(([dealer, status, price], i) => ({
      ...{ dealer, status, price },
      updatedAt: new Date(T0 + ((i * 7) % 10) * 60_000),
    }));
    rows = await seedListings(app, writer, id, plan);
  });
  after(async () => {
    await sql(app, 'UPDATE service_info SET history_started_at = $1', [historyStart]);
    await app.close();
  });

  test('default: roots and every descendant, by displayName then id; isRoot on roots only; meta', async () => {
    const body = await locations(partnerA);
    assert.deepEqual(ids(body.data), ordered(...SUBTREE_A));
    for (const l of body.data) assert.equal(l.isRoot, l.id === id.A, l.locationCode);
    const a1a = body.data.find((l: { id: string }) => l.id === id.A1a);
    assert.deepEqual([a1a.parentId, a1a.locationCode, a1a.city], [id.A1, tree.codes.A1a, 'Gent']);
    assert.deepEqual(a1a.parent, {
      ...{
        id: id.A1,
        locationCode: tree.codes.A1,
        companyName: null,
        fullName: null,
        displayName: 'Dealer A1',
      },
    });
    assert.match(a1a.updatedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const { partner, profileIds, ...meta } = body.meta;
    assert.deepEqual(meta, { total: 7, rootProfileIds: [id.A], filters: { parentId: null, search: null } });
    assert.deepEqual(sorted(profileIds), sorted(SUBTREE_A.map((k) => id[k]!)));
    assert.deepEqual(partner.access, { scope: 'restricted', rootProfileIds: [id.A], profileIds });

    const two = (await locations(partnerAB)).data;
    assert.deepEqual(ids(two), ordered(...SUBTREE_A, 'B', 'B1'));
    assert.deepEqual(ids(two.filter((l: { isRoot: boolean }) => l.isRoot)), ordered('A', 'B'));
  });

  test("includeChildren=false: the roots only; a global partner's roots are the top-level profiles", async () => {
    const roots = await locations(partnerAB, { includeChildren: 'false' });
    assert.deepEqual(ids(roots.data), ordered('A', 'B'));
    assert.equal(roots.meta.total, 2);
    const mine = (items: { id: string }[]) => items.filter((l) => Object.values(id).includes(l.id));
    const g = await locations(global, { includeChildren: 'false' });
    assert.deepEqual(ids(mine(g.data)), ordered('A', 'B'));
    const all = await locations(global);
    assert.deepEqual(ids(mine(all.data)), ordered(...SUBTREE_A, 'B', 'B1'));
    for (const l of mine(all.data) as any[]) assert.equal(l.isRoot, l.id === id.A || l.id === id.B);
    assert.deepEqual(
      [all.meta.profileIds, all.meta.rootProfileIds, all.meta.total],
      [[], [], all.data.length],
    );
  });

  test('parentId / parent_id: direct children, plus deeper ones with includeChildren', async () => {
    const under = async (params: Params) => ids((await locations(partnerA, params)).data);
    assert.deepEqual(await under({ parentId: id.A1! }), ordered('A1a', 'A1a1'));
    assert.deepEqual(await under({ parentId: id.A1!, includeChildren: 'false' }), ordered('A1a'));
    assert.deepEqual(await under({ parent_id: id.A1!, includeChildren: '0' }), ordered('A1a'));
    assert.deepEqual(await under({ parentId: id.A!, includeChildren: 'false' }), ordered('A1', 'A2'));
    assert.deepEqual(await under({ parentId: id.A!.toUpperCase() }), ordered(...SUBTREE_A.slice(1)));
    assert.deepEqual(await under({ parentId: id.A1a1! }), []);
    assert.deepEqual(await under({ parentId: id.A1!, parent_id: id.A2! }), ordered('A1a', 'A1a1'));
    const body = await locations(partnerA, { parentId: id.A2! });
    assert.deepEqual(body.meta.filters, { parentId: id.A2, search: null });
    assert.equal(body.meta.total, 2);
    for (const l of body.data) assert.equal(l.isRoot, false);
    // A partner whose roots include a child of the parent sees that child as a root.
    const nested = (await createPartner(app, { roots: [id.A!, id.A1a!] })).secret;
    const marks = (await locations(nested, { parentId: id.A1! })).data.map((l: any) => [l.id, l.isRoot]);
    assert.deepEqual(marks, [
      [id.A1a, true],
      [id.A1a1, false],
    ]);
  });

  test('parentId outside the scope or unknown is 403 PROFILE_FORBIDDEN; malformed is 400', async () => {
    const forbidden = async (secret: string, parentId: string) =>
      assertError(
        await app.call('GET', `${EXT}/locations${qs({ parentId })}`, { secret }),
        403,
        'PROFILE_FORBIDDEN',
      );
    await forbidden(partnerA, id.B!);
    await forbidden(partnerA, id.B1!);
    await forbidden(partnerA, unknownId());
    // Unknown is refused like out of scope for a global partner too (this once answered 200 []).
    await forbidden(global, unknownId());
    await forbidden((await createPartner(app, { roots: [id.A1!] })).secret, id.A!);
    for (const name of ['parentId', 'parent_id']) {
      assertInvalidQuery(await app.call('GET', `${EXT}/locations?${name}=nope`, { secret: partnerA }), name);
    }
  });

  test('search: case-insensitive substring of names, city, province or location code', async () => {
    const find = async (search: string, extra: Params = {}) =>
      ids((await locations(partnerAB, { search, ...extra })).data);
    assert.deepEqual(await find('GENT'), ordered(...SUBTREE_A));
    assert.deepEqual(await find('utrecht'), ordered('B', 'B1'));
    assert.deepEqual(await find('oost-VLAANDEREN'), ordered('A', 'A1', 'A1a', 'A2'));
    assert.deepEqual(await find('alpha motors'), ordered('A'));
    assert.deepEqual(await find('fleet corn'), ordered('A1a1'));
    assert.deepEqual(await find('dealer a1'), ordered('A1', 'A1a', 'A1a1'));
    assert.deepEqual(await find(tree.codes.A1a!.toUpperCase()), ordered('A1a'));
    assert.deepEqual(await find('a2 TWIN', { parentId: id.A! }), ordered('T1', 'T2'));
    assert.deepEqual(await find('dealer a1', { parentId: id.A!, includeChildren: 'false' }), ordered('A1'));
    assert.deepEqual(await find('no-such-dealer-anywhere'), []);
    // Lower-cased on both sides by the database: JavaScript lower-cases "İ" to "i̇" (two code
    // points), PostgreSQL's lower() otherwise, and the exact name was not found.
    assert.deepEqual(await find('İZMİR OTO'), ordered('T1'));
    const trimmed = await locations(partnerAB, { search: '  Dealer B1  ' });
    assert.deepEqual(ids(trimmed.data), ordered('B1'));
    assert.deepEqual(
      [trimmed.meta.filters, trimmed.meta.total],
      [{ parentId: null, search: 'Dealer B1' }, 1],
    );
  });

  test('opt-in pages: pageSize and cursor walk the same list in the same order, nothing twice or missing', async () => {
    const whole = await locations(partnerAB);
    assert.equal(whole.pagination, undefined, 'no paging unless asked for');
    for (const [params, expected] of [
      [{}, ids(whole.data)],
      [{ search: 'dealer a' }, ids((await locations(partnerAB, { search: 'dealer a' })).data)],
      [{ parentId: id.A! }, ids((await locations(partnerAB, { parentId: id.A! })).data)],
    ] as [Params, string[]][]) {
      for (const size of [1, 2, 3]) {
        const walked: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        for (;;) {
          const page = await locations(partnerAB, {
            ...params,
            pageSize: size,
            ...(cursor ? { cursor } : {}),
          });
          assert.ok(page.data.length <= size);
          assert.equal(page.meta.total, expected.length, 'meta.total counts every page');
          assert.equal(page.pagination.pageSize, size);
          walked.push(...ids(page.data));
          cursor = page.pagination.nextCursor;
          pages++;
          if (!page.pagination.hasMore) break;
        }
        assert.deepEqual(walked, expected, `${JSON.stringify(params)} pageSize ${size}`);
        assert.equal(pages, Math.max(1, Math.ceil(expected.length / size)), 'hasMore is exact');
        // The last cursor resumes after the end: nothing more.
        const end = await locations(partnerAB, { ...params, pageSize: size, cursor: cursor! });
        assert.deepEqual([end.data, end.pagination.hasMore], [[], false]);
      }
    }
    // With stats, only the page's locations are counted, and they match the unpaged answer.
    const first = await locations(partnerAB, { pageSize: 2 });
    for (const l of first.data)
      assert.deepEqual(l.stats, whole.data.find((w: { id: string }) => w.id === l.id).stats);
    // Aliases, the clamp, a cursor alone (default page size), and the cursor's filters.
    assert.equal((await locations(partnerAB, { limit: 100000 })).pagination.pageSize, 500);
    assert.equal((await locations(partnerAB, { page_size: 2 })).data.length, 2);
    const alone = await locations(partnerAB, { cursor: first.pagination.nextCursor });
    assert.deepEqual(ids(alone.data), ids(whole.data).slice(2));
    const mismatched = await app.call(
      'GET',
      `${EXT}/locations?search=gent&cursor=${first.pagination.nextCursor}`,
      { secret: partnerAB },
    );
    assertInvalidQuery(mismatched, 'cursor');
    const listingCursor = (await getOk(app, partnerAB, '/listings?pageSize=1')).pagination.nextCursor;
    assertInvalidQuery(
      await app.call('GET', `${EXT}/locations?cursor=${listingCursor}`, { secret: partnerAB }),
      'cursor',
    );
    assertInvalidQuery(
      await app.call('GET', `${EXT}/locations?pageSize=0`, { secret: partnerAB }),
      'pageSize',
    );
  });

  test("withCounts (default true): counts of each location's own listings; no average on a fresh history", async () => {
    // As on a fresh database (a reused PostgreSQL database may have been moved back by a run).
    await sql(app, 'UPDATE service_info SET history_started_at = now()');
    const stats = async (params: Params = {}) =>
      new Map((await locations(partnerAB, params)).data.map((l: any) => [l.id, l.stats]));
    const expected = (key: string) => {
      const own = rows.filter((r) => r.dealer === key);
      return { activeListings: own.filter((r) => r.status === 'active').length, totalListings: own.length };
    };
    const got = await stats();
    for (const key of [...SUBTREE_A, 'B', 'B1']) assert.deepEqual(got.get(id[key]), expected(key), key);
    assert.deepEqual(got.get(id.A1), { activeListings: 2, totalListings: 5 });
    assert.deepEqual((await stats({ withCounts: 'TRUE' })).get(id.A1), {
      activeListings: 2,
      totalListings: 5,
    });
    // A status change shows at once.
    const a1Active = rows.find((r) => r.dealer === 'A1' && r.status === 'active')!;
    await setStatusOk(app, writer, a1Active.ref, 'sold');
    assert.deepEqual((await stats()).get(id.A1), { activeListings: 1, totalListings: 5 });
    await setStatusOk(app, writer, a1Active.ref, 'active');
    await pinTimes(app, a1Active.id, a1Active.updatedAt, a1Active.createdAt);
    for (const off of ['false', '0', 'False']) {
      const body = await locations(partnerAB, { withCounts: off });
      assert.equal(body.data.length, 9);
      for (const l of body.data) assert.ok(!('stats' in l), off);
    }
  });

  test('boolean parameters accept true/false/1/0 in any case and reject anything else', async () => {
    const count = async (includeChildren: string) =>
      (await locations(partnerA, { includeChildren })).meta.total;
    for (const yes of ['true', 'TRUE', 'True', '1']) assert.equal(await count(yes), 7, yes);
    for (const no of ['false', 'FALSE', 'fAlSe', '0']) assert.equal(await count(no), 1, no);
    for (const name of ['includeChildren', 'withCounts']) {
      for (const bad of ['yes', 'no', '', '2', 'truee', 'on']) {
        const reply = await app.call('GET', `${EXT}/locations${qs({ [name]: bad })}`, { secret: partnerA });
        assertInvalidQuery(reply, name);
      }
    }
    const path = `${EXT}/locations/${id.A}/listings?includeChildren=yes`;
    assertInvalidQuery(await app.call('GET', path, { secret: partnerA }), 'includeChildren');
  });

  test('stats.avgActivePrevMonth: mean of active listings at each day-end of the previous month', async () => {
    const { start, days } = previousMonthUtc(new Date());
    const half = Math.floor(days / 2);
    const dealer = async (key: string) =>
      (await app.admin<{ id: string }>('POST', '/dealers', { locationCode: unique(key) })).id;
    const [s, s2] = [await dealer('S'), await dealer('S2')];
    const w = (await createPartner(app, { roots: [s, s2], scopes: ALL_SCOPES })).secret;
    const r = (await createPartner(app, { roots: [s, s2] })).secret;
    const early = start - 10 * DAY_MS;
    // Each listing: its status changes [status, instant] in order; the API writes them, SQL dates them.
    // biome-ignore format: one listing per line
    const plan: [string, [string, number][]][] = [
      [s, [['active', early]]], // the whole month
      [s, [['active', start + half * DAY_MS]]], // from a midnight mid-month
      [s, [['active', start + half * DAY_MS - 1]]], // a millisecond earlier: that day-end counts too
      [s, [['active', early], ['sold', start + 10 * DAY_MS + DAY_MS / 2]]], // 10 day-ends
      [s, [['active', early], ['sold', start + 10 * DAY_MS]]], // sold as day 10 ends: still 10
      [s, [['pending', early]]],
      [s, [['active', Date.now()]]], // this month only
      [s, [['active', early], ['pending', start + 5 * DAY_MS], ['active', start + 20 * DAY_MS]]],
      [s2, [['active', early]]],
    ];
    for (const [dealerId, changes] of plan) {
      const ref = unique('hist');
      const body = listingBody({ dealerProfileId: dealerId, status: changes[0]![0] });
      const listingId = (await bulkUpsert(app, w, [{ externalReference: ref, ...body }]))[ref]!;
      for (const [status] of changes.slice(1)) await setStatusOk(app, w, ref, status);
      const history = await sql(
        app,
        'SELECT id, status FROM listing_status_history WHERE listing_id = $1 ORDER BY id',
        [listingId],
      );
      assert.deepEqual(
        history.map((h) => h.status),
        changes.map(([status]) => status),
      );
      for (const [i, h] of history.entries()) {
        const when = new Date(changes[i]![1]);
        await sql(app, 'UPDATE listing_status_history SET changed_at = $2 WHERE id = $1', [h.id, when]);
      }
    }
    const mean = (d: string) =>
      meanActiveAtDayEnds(
        plan.filter(([x]) => x === d).map(([, c]) => c),
        start,
        days,
      );
    // The calendar model agrees with a count by hand: 10 + 10 = the two listings sold after day 10.
    const byHand = (days + (days - half) + (days - half + 1) + 10 + 10 + (5 + days - 20)) / days;
    assert.ok(Math.abs(mean(s) - byHand) < 1e-9, `${mean(s)} vs ${byHand}`);

    const absent = new Map([
      [s, 'absent'],
      [s2, 'absent'],
    ]);
    const avg = async (): Promise<Map<string, any>> =>
      new Map(
        (await locations(r)).data.map((l: any) => [
          l.id,
          'avgActivePrevMonth' in l.stats ? l.stats.avgActivePrevMonth : 'absent',
        ]),
      );
    assert.deepEqual(await avg(), absent);
    await sql(app, `UPDATE service_info SET history_started_at = now() - interval '400 days'`);
    // Kept under the month's first day in UTC whatever the process's time zone: west of UTC, the
    // month's first instant is still the day before in local time.
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    let got: Map<string, any>;
    try {
      got = await avg();
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    const keys = await sql(
      app,
      'SELECT DISTINCT month::text AS month FROM location_month_stats WHERE dealer_profile_id = ANY($1::uuid[])',
      [[s, s2]],
    );
    assert.deepEqual(
      keys.map((k) => k.month),
      [new Date(start).toISOString().slice(0, 10)],
    );
    assert.ok(Math.abs(got.get(s) - mean(s)) <= 0.005 + 1e-9, `S: ${got.get(s)} vs ${mean(s)}`);
    assert.equal(got.get(s2), 1);
    const counts = (await locations(r)).data.find((l: any) => l.id === s).stats;
    assert.deepEqual([counts.activeListings, counts.totalListings], [5, 8]);
    // A location without history in that month averages 0.
    assert.equal((await locations(partnerA)).data[0].stats.avgActivePrevMonth, 0);
    // History must cover the whole month: from its first instant, yes; from a day later, no.
    await sql(app, 'UPDATE service_info SET history_started_at = $1', [new Date(start)]);
    assert.equal((await avg()).get(s2), 1);
    await sql(app, 'UPDATE service_info SET history_started_at = $1', [new Date(start + DAY_MS)]);
    assert.deepEqual(await avg(), absent);
  });

  test('GET /locations/{id}/listings: own listings by default, descendants with includeChildren', async () => {
    const get = (key: string, params: Params = {}) =>
      getOk(app, partnerA, `/locations/${id[key]}/listings${qs(params)}`);
    const active = await get('A1');
    assert.deepEqual(
      ids(active.data),
      idsOf(rows, (r) => r.dealer === 'A1' && r.status === 'active'),
    );
    assert.deepEqual([active.meta.filters.locationId, active.meta.filters.includeChildren], [id.A1, false]);
    assert.deepEqual(ids((await get('A1', { status: 'all' })).data), listingsAt('A1'));
    assert.deepEqual(ids((await get('A1', { status: 'all', includeChildren: '0' })).data), listingsAt('A1'));
    const deep = await get('A1', { status: 'ALL', includeChildren: 'true' });
    assert.deepEqual(ids(deep.data), listingsAt('A1', 'A1a', 'A1a1'));
    assert.equal(deep.meta.filters.includeChildren, true);
    assert.deepEqual(ids((await get('A', { status: 'all' })).data), []);
    assert.deepEqual(
      ids((await get('A', { status: 'all', includeChildren: 1 })).data),
      listingsAt('A1', 'A1a', 'A1a1', 'A2'),
    );
    for (const item of deep.data) assert.equal(item.dealer.id, item.dealerProfileId);
  });

  test('GET /locations/{id}/listings: the filters, sort and pagination of /listings', async () => {
    const get = (params: Params) =>
      getOk(app, partnerA, `/locations/${id.A1}/listings${qs({ includeChildren: 'true', ...params })}`);
    const seen = async (params: Params) => ids((await get({ status: 'all', ...params })).data);
    const inSub = (r: Seeded) => ['A1', 'A1a', 'A1a1'].includes(r.dealer);
    assert.deepEqual(
      await seen({ status: 'sold' }),
      idsOf(rows, (r) => inSub(r) && r.status === 'sold'),
    );
    assert.deepEqual(await seen({ locationCode: tree.codes.A1a!.toUpperCase() }), listingsAt('A1a'));
    assert.deepEqual(await seen({ location_code: tree.codes.A2! }), []);
    const since = new Date(T0 + 5 * 60_000);
    assert.deepEqual(
      await seen({ updatedSince: since.toISOString() }),
      idsOf(rows, (r) => inSub(r) && r.updatedAt >= since),
    );
    assert.deepEqual(
      await seen({ sort: '-price' }),
      idsOf(
        rows,
        inSub,
        byKeyThenId((r) => r.price, -1),
      ),
    );
    const page = await get({ status: 'all', page: 2, pageSize: 3 });
    assertPagination(page, [2, 3, 8, 3]);
    assert.deepEqual(ids(page.data), listingsAt('A1', 'A1a', 'A1a1').slice(3, 6));
    assertPagination(await get({ status: 'all', page_number: 3, limit: 3 }), [3, 3, 8, 3]);
    assertPagination(await get({ status: 'all', page_size: 900 }), [1, 200, 8, 1]);
    assert.deepEqual((await get({ status: 'all', page: 4, pageSize: 3 })).data, []);
    // The dealer and parent filters of /listings are no parameters here: refused, not ignored.
    for (const name of ['dealerId', 'parentDealerId'])
      assertInvalidQuery(
        await app.call('GET', `${EXT}/locations/${id.A1}/listings${qs({ [name]: id.A1! })}`, {
          secret: partnerA,
        }),
        name,
      );
    const foreign = `${EXT}/locations/${id.A1}/listings?locationCode=${tree.codes.B}`;
    assertError(await app.call('GET', foreign, { secret: partnerA }), 403, 'PROFILE_FORBIDDEN');
    for (const [name, value] of new URLSearchParams(
      'page=0&pageSize=-1&status=bogus&updatedSince=x&sort=x',
    )) {
      const path = `${EXT}/locations/${id.A1}/listings${qs({ [name]: value })}`;
      assertInvalidQuery(await app.call('GET', path, { secret: partnerA }), name);
    }
  });

  test('GET /locations/{id}/listings: 404 for an unknown or out-of-scope location, 400 for a malformed id', async () => {
    const call = (secret: string, locationId: string) =>
      app.call('GET', `${EXT}/locations/${locationId}/listings`, { secret });
    assertError(await call(partnerA, id.B!), 404, 'NOT_FOUND');
    assertError(await call(partnerA, unknownId()), 404, 'NOT_FOUND');
    assertError(await call(global, unknownId()), 404, 'NOT_FOUND');
    assertError(await call((await createPartner(app, { roots: [id.A1!] })).secret, id.A!), 404, 'NOT_FOUND');
    assert.deepEqual(ids((await getOk(app, global, `/locations/${id.B}/listings`)).data), listingsAt('B'));
    assertInvalidQuery(await call(partnerA, 'not-a-uuid'), 'id');
  });

  test('a page ending at a location of the longest name gives a cursor that is taken back', async () => {
    // Its sort key travels in the cursor: 200 control characters are 1,200 bytes of JSON, and the
    // cursor (over 1,000 characters) was refused as too long, so the walk could not go on.
    for (const displayName of ['\u0001'.repeat(200), '中'.repeat(200)]) {
      const root = await app.admin<{ id: string }>('POST', '/dealers', {
        locationCode: unique('long-name'),
        displayName,
      });
      const only = (await createPartner(app, { roots: [root.id] })).secret;
      const first = await getOk(app, only, '/locations?pageSize=1');
      assert.deepEqual(ids(first.data), [root.id]);
      const cursor: string = first.pagination.nextCursor;
      const rest = await app.call('GET', `${EXT}/locations?pageSize=1&cursor=${cursor}`, { secret: only });
      assert.equal(rest.status, 200, `a cursor of ${cursor.length} characters: ${rest.text}`);
      assert.deepEqual(rest.body.data, []);
    }
    const tooLong = await app.call('GET', `${EXT}/locations?cursor=${'x'.repeat(4097)}`, {
      secret: partnerA,
    });
    assertInvalidQuery(tooLong, 'cursor');
    assert.match(tooLong.body.error.message, /at most 4096 characters/);
  });
});
