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
import { allPages, bulkUpsert, putListing, setStatusOk } from './helpers/listings-api.js';
import {
  assertError,
  assertInvalidQuery,
  assertPagination,
  byKeyThenId,
  getOk,
  ids,
  idsOf,
  pinTimes,
  qs,
  type Seeded,
  seedListings,
  sorted,
  unknownId,
} from './helpers/read-fixtures.js';

type Params = Record<string, string | number>;
const T0 = Date.parse('2021-03-04T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// dealer, status, price, updatedAt and createdAt (minutes after T0). Rows 6 and 7 share
// updatedAt, rows 3 and 7 a price; createdAt runs against updatedAt.
const PLAN: [string, string, number | null, number, number][] = [
  ['A', 'active', 10000, 1, 8],
  ['A1', 'active', 30000, 2, 7],
  ['A1a', 'active', 20000, 3, 6],
  ['A2', 'pending', 15000, 4, 5],
  ['A2', 'sold', 12000, 5, 4],
  ['A1', 'draft', null, 6, 3],
  ['A', 'active', 20000, 6, 2],
  ['B', 'active', 5000, 7, 1],
  ['B1', 'active', 25000, 8, 0],
];

describe('GET /listings and GET /listings/{id}', () => {
  let app: TestApp;
  let tree: Tree;
  let writer: string;
  let partnerA: string;
  let partnerA1: string;
  let global: string;
  let rows: Seeded[] = [];

  const inA = (r: Seeded) => r.dealer.startsWith('A');
  const of = (...dealers: string[]) => idsOf(rows, (r) => dealers.includes(r.dealer));
  const expect = (keep: (r: Seeded) => boolean, order?: (a: Seeded, b: Seeded) => number) =>
    idsOf(rows, keep, order);
  const list = (secret: string, params: Params = {}) => getOk(app, secret, `/listings${qs(params)}`);
  /** Ids listed for partner A with every status, plus these parameters. */
  const seenByA = async (params: Params = {}) =>
    ids((await list(partnerA, { status: 'all', ...params })).data);

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    writer = (await createPartner(app, { roots: [tree.ids.A!, tree.ids.B!], scopes: ALL_SCOPES })).secret;
    partnerA = (await createPartner(app, { roots: [tree.ids.A!] })).secret;
    partnerA1 = (await createPartner(app, { roots: [tree.ids.A1!] })).secret;
    global = (await createPartner(app, { global: true })).secret;
    rows = await seedListings(
      app,
      writer,
      tree.ids,
      PLAN.map(([dealer, status, price, u, c]) => ({
        dealer,
        status,
        price,
        updatedAt: at(u),
        createdAt: at(c),
      })),
    );
  });
  after(() => app.close());

  test('scope isolation: each partner sees its subtree only, never a sibling or parent', async () => {
    assert.deepEqual(await seenByA(), expect(inA));
    const seen = async (roots: string[]) => {
      const secret = (await createPartner(app, { roots: roots.map((k) => tree.ids[k]!) })).secret;
      return ids((await list(secret, { status: 'all' })).data);
    };
    assert.deepEqual(await seen(['A1']), of('A1', 'A1a'));
    assert.deepEqual(await seen(['B']), of('B', 'B1'));
    assert.deepEqual(await seen(['A1a', 'A2', 'B1']), of('A1a', 'A2', 'B1'));
  });

  test("a global partner sees every listing (checked on this file's dealers only)", async () => {
    const mine = new Set(ids(rows));
    const seen = (await allPages(app, global, '/listings?status=all')).filter((l) => mine.has(l.id));
    assert.deepEqual(sorted(ids(seen)), sorted([...mine]));
    const underA = await list(global, { status: 'all', parentDealerId: tree.ids.A! });
    assert.deepEqual(ids(underA.data), expect(inA));
  });

  test('status: default active; pending, sold, draft, all; case-insensitive', async () => {
    const defaults = await list(partnerA);
    assert.deepEqual(
      ids(defaults.data),
      expect((r) => inA(r) && r.status === 'active'),
    );
    assert.equal(defaults.meta.filters.status, 'active');
    for (const status of ['active', 'pending', 'sold', 'draft']) {
      const body = await list(partnerA, { status: status.toUpperCase() });
      assert.deepEqual(
        ids(body.data),
        expect((r) => inA(r) && r.status === status),
        status,
      );
      for (const item of body.data) assert.equal(item.status, status);
    }
    assert.equal((await list(partnerA, { status: ' All ' })).pagination.totalItems, 7);
  });

  test('dealer filters and their aliases; parent filters include descendants', async () => {
    for (const name of ['dealerId', 'locationId', 'profileId', 'userId']) {
      assert.deepEqual(await seenByA({ [name]: tree.ids.A1!.toUpperCase() }), of('A1'), name);
    }
    for (const name of ['parentDealerId', 'parentId', 'companyId']) {
      const body = await list(partnerA, { status: 'all', [name]: tree.ids.A1! });
      assert.deepEqual(ids(body.data), of('A1', 'A1a'), name);
      assert.equal(body.meta.filters.parentDealerId, tree.ids.A1);
    }
    assert.deepEqual(await seenByA({ parentDealerId: tree.ids.A!, dealerId: tree.ids.A2! }), of('A2'));
    assert.deepEqual(await seenByA({ locationCode: tree.codes.A1a!.toUpperCase() }), of('A1a'));
    assert.deepEqual(await seenByA({ location_code: tree.codes.A2!.toLowerCase() }), of('A2'));
    const body = await list(partnerA, { limit: 5, userId: tree.ids.A1!, location_code: tree.codes.A1! });
    assert.deepEqual(body.meta.filters, {
      status: 'active',
      updatedSince: null,
      sort: 'updatedAt',
      dealerIds: [tree.ids.A1],
      parentDealerId: null,
      locationCode: tree.codes.A1,
    });
  });

  test('the canonical parameter wins over its alias', async () => {
    const [a1, a2] = [tree.ids.A1!, tree.ids.A2!];
    assert.deepEqual(await seenByA({ profileId: a1, userId: a2 }), of('A1'));
    assert.deepEqual(await seenByA({ parentDealerId: a1, parentId: a2, companyId: a2 }), of('A1', 'A1a'));
    assert.deepEqual(
      await seenByA({ locationCode: tree.codes.A1a!, location_code: tree.codes.A2! }),
      of('A1a'),
    );
    assert.deepEqual(
      await seenByA({ updatedSince: at(5).toISOString(), updated_since: at(0).toISOString() }),
      expect((r) => inA(r) && r.updatedAt >= at(5)),
    );
    const paging = await list(partnerA, {
      status: 'all',
      page: 2,
      page_number: 1,
      pageSize: 2,
      page_size: 3,
      limit: 4,
    });
    assertPagination(paging, [2, 2, 7, 4]);
    assert.deepEqual(ids(paging.data), expect(inA).slice(2, 4));
  });

  test('updatedSince / updated_since is inclusive and accepts offsets and dates', async () => {
    const since = (m: number) => expect((r) => inA(r) && r.updatedAt >= at(m));
    const exact = await list(partnerA, { status: 'all', updatedSince: at(4).toISOString() });
    assert.deepEqual(ids(exact.data), since(4));
    assert.equal(exact.meta.filters.updatedSince, at(4).toISOString());
    // Microseconds are cut to the millisecond, the bound moving earlier (docs/contract.md).
    const micro = await list(partnerA, {
      status: 'all',
      updatedSince: at(4).toISOString().replace('.000Z', '.000900Z'),
    });
    assert.deepEqual(ids(micro.data), since(4));
    assert.equal(micro.meta.filters.updatedSince, at(4).toISOString());
    // One millisecond later, the listing updated exactly at 10:04 drops out.
    const justAfter = await seenByA({ updated_since: new Date(at(4).getTime() + 1).toISOString() });
    assert.deepEqual(justAfter, since(5));
    assert.equal(justAfter.length, since(4).length - 1);
    // 10:04 UTC written as 12:04+02:00: encoded, and with a raw "+" that arrives as a space.
    const offset = '2021-03-04T12:04:00+02:00';
    assert.deepEqual(await seenByA({ updatedSince: offset }), since(4));
    assert.deepEqual(
      ids((await getOk(app, partnerA, `/listings?status=all&updatedSince=${offset}`)).data),
      since(4),
    );
    assert.deepEqual(await seenByA({ updatedSince: '2021-03-05' }), []);
    assert.deepEqual(await seenByA({ updatedSince: '2021-03-04' }), since(0));
    // A leap day is a real day; the extreme years work.
    assert.deepEqual(await seenByA({ updatedSince: '2020-02-29' }), since(0));
    assert.deepEqual(await seenByA({ updatedSince: '0001-01-01' }), since(0));
    assert.deepEqual(await seenByA({ updatedSince: '9999-12-31T23:59:59Z' }), []);
  });

  test('sort: every order with ties by id; the default is updatedAt then id', async () => {
    const orders: [string, (a: Seeded, b: Seeded) => number][] = [
      ['updatedAt', byKeyThenId((r) => r.updatedAt.getTime())],
      ['-updatedAt', byKeyThenId((r) => r.updatedAt.getTime(), -1)],
      ['createdAt', byKeyThenId((r) => r.createdAt.getTime())],
      ['-createdAt', byKeyThenId((r) => r.createdAt.getTime(), -1)],
      ['price', byKeyThenId((r) => r.price)],
      ['-price', byKeyThenId((r) => r.price, -1)],
    ];
    for (const [sort, order] of orders) {
      const body = await list(partnerA, { status: 'all', sort });
      assert.deepEqual(ids(body.data), expect(inA, order), sort);
      assert.equal(body.meta.filters.sort, sort);
    }
    const fallback = await list(partnerA, { status: 'all' });
    assert.deepEqual(ids(fallback.data), expect(inA, orders[0]![1]));
    assert.equal(fallback.meta.filters.sort, 'updatedAt');
    // The draft has no price: last both ways.
    const draft = rows.find((r) => r.status === 'draft')!.id;
    assert.equal((await seenByA({ sort: '-price' })).at(-1), draft);
    assert.equal((await seenByA({ sort: 'price' })).at(-1), draft);
  });

  test('-updatedAt is the reverse of updatedAt, after a change of the service’s too', async () => {
    // Found by review (2026-11-30): updatedAt walked changedAt (the sync position) but
    // -updatedAt sorted by updatedAt, so after a change of the service's (here a status set in
    // SQL, as an image check's result moves changedAt alone) both orders gave the same list.
    const own = await createTree(app);
    const secret = (await createPartner(app, { roots: [own.ids.A!], scopes: ALL_SCOPES })).secret;
    const made = await bulkUpsert(
      app,
      secret,
      ['x', 'y'].map((n) => ({
        externalReference: unique(n),
        ...listingBody({ dealerProfileId: own.ids.A }),
      })),
    );
    const [x, y] = Object.values(made);
    await pinTimes(app, x!, at(1), at(1));
    await pinTimes(app, y!, at(2), at(2));
    await app.running.db.query('TestServiceChange', "UPDATE listings SET status = 'pending' WHERE id = $1", [
      x,
    ]);
    const forward = await list(secret, { status: 'all' });
    assert.deepEqual(ids(forward.data), [y, x]);
    assert.ok(forward.data[1].changedAt > forward.data[0].changedAt, JSON.stringify(forward.data));
    assert.ok(forward.data[1].updatedAt < forward.data[0].updatedAt, 'x kept its updatedAt');
    assert.deepEqual(ids((await list(secret, { status: 'all', sort: '-updatedAt' })).data), [x, y]);
  });

  test('listings written in one bulk share updatedAt and come in id order', async () => {
    const items = [1, 2, 3, 4, 5].map((n) => ({
      externalReference: unique(`tie${n}`),
      ...listingBody({ dealerProfileId: tree.ids.B1 }),
    }));
    const created = sorted(Object.values(await bulkUpsert(app, writer, items)));
    const params = { dealerId: tree.ids.B1!, updatedSince: at(60).toISOString() };
    const body = await list(global, params);
    assert.equal(new Set(body.data.map((l: { updatedAt: string }) => l.updatedAt)).size, 1);
    assert.deepEqual(ids(body.data), created);
    assert.deepEqual(ids((await list(global, { ...params, sort: '-updatedAt' })).data), created.reverse());
  });

  test('pagination: pages, aliases, clamping to 200, a page past the end', async () => {
    const all = expect(inA);
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const body = await list(partnerA, { status: 'all', page, pageSize: 2 });
      assertPagination(body, [page, 2, 7, 4]);
      assert.equal(body.data.length, page < 4 ? 2 : 1);
      seen.push(...ids(body.data));
    }
    assert.deepEqual(seen, all);
    const aliases = await list(partnerA, { status: 'all', page_number: 2, page_size: 3 });
    assertPagination(aliases, [2, 3, 7, 3]);
    assert.deepEqual(ids(aliases.data), all.slice(3, 6));
    assertPagination(await list(partnerA, { status: 'all', limit: 5 }), [1, 5, 7, 2]);
    assertPagination(await list(partnerA, { status: 'all' }), [1, 50, 7, 1]);
    for (const name of ['pageSize', 'page_size', 'limit']) {
      const big = await list(partnerA, { status: 'all', [name]: 500 });
      assertPagination(big, [1, 200, 7, 1]);
      assert.deepEqual(ids(big.data), all);
    }
    const past = await list(partnerA, { status: 'all', page: 9, pageSize: 2 });
    assert.deepEqual(past.data, []);
    assertPagination(past, [9, 2, 7, 4]);
  });

  test('invalid query values are 400 INVALID_QUERY with issues naming the parameter', async () => {
    const cases = new URLSearchParams(
      'page=0&page=abc&page=1.5&page_number=-2&pageSize=-1&pageSize=0&limit=ten&status=bogus&' +
        'updatedSince=notadate&updated_since=2021-13-45&dealerId=not-a-uuid&parentDealerId=1234&' +
        'profileId=x&sort=bogus&sort=price+desc&' +
        // Not calendar days (once silently rolled over to March 2nd, May 1st, March 1st).
        'updatedSince=2021-02-30&updatedSince=2021-04-31T10:00:00Z&updated_since=2023-02-29&' +
        // Outside the years 1 to 9999 (once a 500 from the database).
        'updatedSince=0000-01-01&updatedSince=9999-12-31T23:59:59-05:00',
    );
    for (const [name, value] of cases) {
      assertInvalidQuery(
        await app.call('GET', `${EXT}/listings${qs({ [name]: value })}`, { secret: partnerA }),
        name,
      );
    }
  });

  test('unknown query parameters are refused, each with the closest known name (a typo never changes the answer)', async () => {
    // ?stauts=sold once answered 200 with active listings.
    const reply = await app.call('GET', `${EXT}/listings${qs({ stauts: 'sold', pagesize: 2, foo: 'bar' })}`, {
      secret: partnerA,
    });
    const error = assertError(reply, 400, 'INVALID_QUERY');
    assert.deepEqual(
      error.issues.map((i: { path: string; code: string; message: string }) => [i.path, i.code, i.message]),
      [
        ['query.stauts', 'unknown_parameter', 'is not a known parameter; did you mean `status`?'],
        ['query.pagesize', 'unknown_parameter', 'is not a known parameter; did you mean `pageSize`?'],
        ['query.foo', 'unknown_parameter', 'is not a known parameter'],
      ],
    );
    assert.match(
      error.message,
      /query\.stauts is not a known parameter; did you mean `status`\? \(and 2 more issues\)/,
    );
    // Unknown names and bad values of known ones, all in one answer.
    const both = assertError(
      await app.call('GET', `${EXT}/listings${qs({ stauts: 'sold', pageSize: 'ten' })}`, {
        secret: partnerA,
      }),
      400,
      'INVALID_QUERY',
    );
    assert.deepEqual(both.issues.map((i: { path: string }) => i.path).sort(), [
      'query.pageSize',
      'query.stauts',
    ]);
  });

  test('a filter naming a profile outside the scope, or unknown, is 403 PROFILE_FORBIDDEN', async () => {
    const forbidden = async (secret: string, params: Record<string, string>) =>
      assertError(
        await app.call('GET', `${EXT}/listings${qs(params)}`, { secret }),
        403,
        'PROFILE_FORBIDDEN',
      );
    for (const name of [
      'dealerId',
      'locationId',
      'profileId',
      'userId',
      'parentDealerId',
      'parentId',
      'companyId',
    ]) {
      await forbidden(partnerA, { [name]: tree.ids.B! });
      await forbidden(partnerA, { [name]: unknownId() });
      await forbidden(global, { [name]: unknownId() });
    }
    // A1's partner may not name A, though A's subtree contains A1.
    await forbidden(partnerA1, { parentDealerId: tree.ids.A! });
    await forbidden(partnerA1, { dealerId: tree.ids.A2! });
    await forbidden(partnerA, { locationCode: tree.codes.B1! });
    await forbidden(partnerA, { location_code: unique('nope') });
    await forbidden(global, { locationCode: unique('nope') });
  });

  test('GET /listings/{id}: the full read shape', async () => {
    // A tree of its own, so these listings do not change what the other tests count.
    const own = await createTree(app);
    const ownWriter = (await createPartner(app, { roots: [own.ids.A!], scopes: ALL_SCOPES })).secret;
    const reader = (await createPartner(app, { roots: [own.ids.A!] })).secret;
    const ref = unique('full');
    const images = ['https://img.example/1.jpg', 'https://img.example/2.jpg', 'https://img.example/3.jpg'];
    const id = await putListing(app, ownWriter, ref, {
      ...listingBody({ dealerProfileId: own.ids.A1a, price: 24999.5 }),
      ...{ mileage: 45000, fuelType: 'diesel', vin: 'wvwzzz1kzaw000001', firstRegistration: '2020-03' },
      ...{ postalCode: '9000', city: 'Gent', province: 'Oost-Vlaanderen', latitude: 51.05, longitude: 3.72 },
      images,
      features: [{ category: 'comfort', name: 'Heated seats' }, 'Towbar'],
      historyReportUrl: 'https://www.car-pass.be/en/report/123',
    });
    const body = await getOk(app, reader, `/listings/${id.toUpperCase()}`);
    const l = body.data;
    const keys = ['id', 'externalReference', 'dealerProfileId', 'status', 'price', 'currency', 'mileage'];
    const more = ['fuelType', 'vin', 'firstRegistration', 'historyReportUrl', 'listingUrl'];
    assert.deepEqual(Object.fromEntries([...keys, ...more].map((k) => [k, l[k]])), {
      ...{ id, externalReference: ref, dealerProfileId: own.ids.A1a, status: 'active', price: 24999.5 },
      ...{ currency: 'EUR', mileage: 45000, fuelType: 'diesel', vin: 'WVWZZZ1KZAW000001' },
      firstRegistration: '2020-03-01',
      historyReportUrl: 'https://www.car-pass.be/en/report/123',
      listingUrl: `https://cars.example/listings/${l.slug}`,
    });
    assert.equal(typeof l.externalProvider, 'string');
    const location = {
      postalCode: '9000',
      city: 'Gent',
      province: 'Oost-Vlaanderen',
      latitude: 51.05,
      longitude: 3.72,
    };
    assert.deepEqual(l.location, location);
    for (const flat of Object.keys(location)) assert.ok(!(flat in l), flat);
    assert.deepEqual(
      l.images,
      images.map((url, position) => ({ url, position, check: l.images[position].check })),
    );
    assert.deepEqual(
      l.images.map((image: { check: { state: string } }) => image.check.state),
      ['pending', 'pending', 'pending'],
    );
    assert.equal(l.mainImageUrl, images[0]);
    assert.deepEqual(l.features, [
      { category: 'comfort', name: 'Heated seats' },
      { category: 'other', name: 'Towbar' },
    ]);
    const { id: dealerId, parentId, locationCode, displayName, parent } = l.dealer;
    assert.deepEqual(
      { dealerId, parentId, locationCode, displayName },
      { dealerId: own.ids.A1a, parentId: own.ids.A1, locationCode: own.codes.A1a, displayName: 'Dealer A1a' },
    );
    assert.deepEqual(parent, {
      ...{
        id: own.ids.A1,
        locationCode: own.codes.A1,
        companyName: null,
        fullName: null,
        displayName: 'Dealer A1',
      },
    });
    assert.match(l.createdAt, ISO_MS);
    assert.match(l.updatedAt, ISO_MS);
    assert.ok(!('soldAt' in l));
    assert.equal(body.meta.partner.access.scope, 'restricted');
    // The list shows the very same item.
    assert.deepEqual((await list(reader, { dealerId: own.ids.A1a!, updatedSince: l.updatedAt })).data, [l]);

    // historyReportUrl is absent when not set; soldAt appears only while sold.
    const plainRef = unique('plain');
    const plain = await putListing(app, ownWriter, plainRef, listingBody({ dealerProfileId: own.ids.A }));
    const p = (await getOk(app, reader, `/listings/${plain}`)).data;
    assert.ok(!('historyReportUrl' in p));
    assert.deepEqual([p.images, p.mainImageUrl, p.features, p.dealer.parent], [[], null, [], null]);
    await setStatusOk(app, ownWriter, plainRef, 'sold');
    const sold = (await getOk(app, reader, `/listings/${plain}`)).data;
    assert.equal(sold.status, 'sold');
    assert.match(sold.soldAt, ISO_MS);
    await setStatusOk(app, ownWriter, plainRef, 'active');
    assert.ok(!('soldAt' in (await getOk(app, reader, `/listings/${plain}`)).data));
  });

  test('GET /listings/{id}: 404 outside the scope or unknown, 400 for a malformed id', async () => {
    const get = (secret: string, id: string) => app.call('GET', `${EXT}/listings/${id}`, { secret });
    const [inA, inB] = [rows[0]!.id, rows.find((r) => r.dealer === 'B')!.id];
    assertError(await get(partnerA, inB), 404, 'NOT_FOUND');
    assertError(await get(partnerA1, inA), 404, 'NOT_FOUND');
    assertError(await get(global, unknownId()), 404, 'NOT_FOUND');
    assert.equal((await getOk(app, global, `/listings/${inB}`)).data.id, inB);
    // Any status is readable by id, drafts and sold listings included.
    for (const status of ['draft', 'sold']) {
      const id = rows.find((r) => r.status === status)!.id;
      assert.equal((await getOk(app, partnerA, `/listings/${id}`)).data.status, status);
    }
    for (const bad of ['not-a-uuid', '1234', `${inA}0`]) assertInvalidQuery(await get(partnerA, bad), 'id');
  });
});
