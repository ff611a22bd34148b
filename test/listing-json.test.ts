import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { listingSchema, locationSchema } from '../src/api/schemas/resources.js';
import { LIVE } from '../src/domain/access.js';
import { LISTING_KEYS, listingJsonProjection } from '../src/store/listings/json.js';
import { listingReadStore } from '../src/store/listings/reads.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { putListing, setStatusOk } from './helpers/listings-api.js';
import { rawData, rawElements } from './helpers/raw-json.js';

/** An image's check before the checker has looked at it (docs/images.md). */
const PENDING = {
  state: 'pending',
  checkedAt: null,
  format: null,
  width: null,
  height: null,
  bytes: null,
  contentType: null,
  problem: null,
};
/**
 * A listing has one read shape, owned by store/listings/json.ts: pages, single reads and webhook
 * deliveries all send the read model's stored text (test/webhooks.test.ts: a delivery equals
 * GET /listings/{id} byte for byte). Here, for every kind of value (nulls, an optional field
 * present and absent, text that JSON must escape, fractions and tiny floats, images, features, a
 * dealer with metadata and a parent): the answers are that text, the response schema describes
 * it exactly (every key, in order), and each value is what was written, in the contract's form.
 */
let app: TestApp;
let secret: string;
let partnerName: string;
const BASE = 'https://cars.example/listings';
const TITLE = 'Quote " backslash \\ tab \t newline \n bell \u0007 emoji 🚗 line sep \u2028 ü';

before(async () => {
  app = await bootApp();
  const tree = await createTree(app);
  await app.admin('PATCH', `/dealers/${tree.ids.A1a}`, {
    metadata: { crm: 'x"y\\z', nested: { b: [1, 2.5, null], a: true } },
    email: 'sales@a1a.example',
  });
  const partner = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'read:locations', 'write:listings'],
  });
  secret = partner.secret;
  partnerName = (await app.admin('GET', `/partners/${partner.id}`)).name;
  const bodies: Record<string, unknown>[] = [
    listingBody({ dealerLocationCode: tree.codes.A }),
    listingBody({
      dealerLocationCode: tree.codes.A1a,
      title: TITLE,
      description: 'ÄÖÜ € <script>',
      price: 12345.67,
      fuelConsumption: 0.01,
      co2Emission: 99.9,
      latitude: 1e-7,
      longitude: -179.123456789,
      firstRegistration: '2019-03',
      images: ['https://img.example/1.jpg', 'https://img.example/2.jpg?a=1&b="2"'],
      features: ['Navigation', { category: 'safety', name: 'Parking camera' }],
      conditionTags: ['accident-free'],
      historyReportUrl: 'https://www.car-pass.be/en/report/12345678901',
      serviceHistory: true,
      warranty: false,
      mileage: 0,
    }),
    listingBody({ dealerLocationCode: tree.codes.A2, status: 'draft', price: null, brand: null }),
  ];
  for (const [i, body] of bodies.entries()) await putListing(app, secret, `json-${i}`, body);
  await setStatusOk(app, secret, 'json-0', 'sold');
});

after(() => app?.close());

test('the response schema describes the read shape: the same keys in the same order', () => {
  assert.deepEqual(Object.keys(listingSchema.shape), [...LISTING_KEYS]);
});

test('every answer sends the stored text; the schema takes it as it is; each value is the one written', async () => {
  const store = listingReadStore(app.running.db);
  const page = await app.call('GET', `${EXT}/listings?status=all&pageSize=200`, { secret });
  assert.equal(page.status, 200, page.text);
  const texts = rawElements(page.text, '{"data":[');
  assert.equal(texts.length, 3);
  for (const [i, listed] of page.body.data.entries()) {
    // The schema neither drops, adds nor reorders a key, and accepts every value.
    assert.equal(JSON.stringify(listingSchema.parse(listed)), JSON.stringify(listed));
    // The page, the single read and the read model's text: one text, to the byte.
    const own = await store.get(listed.id, LIVE, listingJsonProjection(BASE));
    assert.equal(texts[i], own!.json);
    const single = await app.call('GET', `${EXT}/listings/${listed.id}`, { secret });
    assert.equal(rawData(single.text), own!.json);
    // Its head: spliced at read time.
    assert.equal(listed.listingUrl, `${BASE}/${listed.slug}`);
    assert.equal(listed.externalProvider, partnerName);
    assert.equal(listed.dealerProfileId, listed.dealer.id);
    assert.match(listed.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.match(listed.updatedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  }
  const rich = page.body.data.find((l: { title: string }) => l.title === TITLE);
  const { id, slug, listingUrl, dealerProfileId, externalReference, externalProvider, dealer, ...rest } =
    rich;
  const { createdAt, updatedAt, changedAt, ...values } = rest;
  // The sync position: on a partner's write, the time of that write.
  assert.equal(changedAt, updatedAt);
  assert.deepEqual(values, {
    title: TITLE,
    description: 'ÄÖÜ € <script>',
    status: 'active',
    price: 12345.67,
    currency: 'EUR',
    brand: 'Volkswagen',
    model: 'Golf',
    variant: null,
    year: 2021,
    mileage: 0,
    fuelType: null,
    transmission: null,
    bodyType: null,
    color: null,
    interiorColor: null,
    interiorMaterial: null,
    paintType: null,
    doors: null,
    seats: null,
    gears: null,
    previousOwners: null,
    powerKw: null,
    co2Emission: 99.9,
    co2Type: null,
    emissionClass: null,
    firstRegistration: '2019-03-01',
    driveType: null,
    weight: null,
    fuelConsumption: 0.01,
    serviceHistory: true,
    warranty: false,
    warrantyMonths: null,
    vehicleType: null,
    conditionTags: ['accident_free'], // the alias sent, in its canonical form
    engine: null,
    vin: null,
    historyReportUrl: 'https://www.car-pass.be/en/report/12345678901',
    location: { postalCode: null, city: null, province: null, latitude: 1e-7, longitude: -179.123456789 },
    images: [
      { url: 'https://img.example/1.jpg', position: 0, check: PENDING },
      { url: 'https://img.example/2.jpg?a=1&b="2"', position: 1, check: PENDING },
    ],
    mainImageUrl: 'https://img.example/1.jpg',
    features: [
      { category: 'other', name: 'Navigation' },
      { category: 'safety', name: 'Parking camera' },
    ],
    readiness: {
      live: false,
      reasons: [
        {
          code: 'images_pending',
          message: 'no image is known to work yet: some are still being checked',
        },
      ],
    },
  });
  assert.equal(externalReference, 'json-1');
  assert.deepEqual(dealer.metadata, { crm: 'x"y\\z', nested: { b: [1, 2.5, null], a: true } });
  assert.equal(dealer.email, 'sales@a1a.example');
  assert.ok(dealer.parent && dealer.parent.id === dealer.parentId);
  const sold = page.body.data.find((l: { status: string }) => l.status === 'sold');
  assert.match(sold.soldAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.ok(!('historyReportUrl' in sold));
  assert.ok(!('soldAt' in rich));
  const draft = page.body.data.find((l: { status: string }) => l.status === 'draft');
  assert.deepEqual([draft.price, draft.brand, draft.images, draft.mainImageUrl], [null, null, [], null]);
});

test('locations too: the database-built JSON equals the schema-serialized locations, with counts and pages', async () => {
  const auth = app.running.useCases.authentication;
  const partner = await auth.partnerOf((await auth.identify(secret)).record, false);
  for (const params of [
    { withCounts: true, includeChildren: true },
    { withCounts: false, includeChildren: true, pageSize: 2 },
    { withCounts: true, includeChildren: false },
  ]) {
    const query = {
      parentId: undefined,
      search: undefined,
      cursor: undefined,
      pageSize: undefined,
      ...params,
    };
    const expected = await app.running.useCases.locations.find(partner, query);
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    const reply = await app.call('GET', `${EXT}/locations?${qs}`, { secret });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    assert.ok(reply.body.data.length > 0);
    assert.equal(
      JSON.stringify(reply.body.data),
      JSON.stringify(z.array(locationSchema).parse(expected.data)),
    );
    assert.equal(reply.body.meta.total, expected.total);
    assert.deepEqual(
      Object.keys(reply.body),
      params.pageSize ? ['data', 'pagination', 'meta'] : ['data', 'meta'],
    );
  }
  const withMetadata = (
    await app.call('GET', `${EXT}/locations?includeChildren=true`, { secret })
  ).body.data.find((l: { metadata: Record<string, unknown> }) => 'crm' in l.metadata);
  assert.deepEqual(withMetadata.metadata, { crm: 'x"y\\z', nested: { b: [1, 2.5, null], a: true } });
  assert.equal(withMetadata.parent.locationCode.length > 0, true);
});

test('a page is sent as JSON with its headers, and the ETag of a single read follows its content', async () => {
  const page = await app.call('GET', `${EXT}/listings?status=all&pageSize=1`, { secret });
  assert.equal(page.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(page.headers['cache-control'], 'no-store');
  const id = page.body.data[0].id;
  const first = await app.call('GET', `${EXT}/listings/${id}`, { secret });
  const etag = first.headers.etag as string;
  const again = await app.call('GET', `${EXT}/listings/${id}`, {
    secret,
    headers: { 'if-none-match': etag },
  });
  assert.equal(again.status, 304);
  await app.call('PUT', `${EXT}/listings/${encodeURIComponent(page.body.data[0].externalReference)}`, {
    secret,
    body: listingBody({ dealerLocationCode: page.body.data[0].dealer.locationCode, title: 'Changed title' }),
  });
  const changed = await app.call('GET', `${EXT}/listings/${id}`, {
    secret,
    headers: { 'if-none-match': etag },
  });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers.etag, etag);
});

test('a page far from ASCII is sent whole: each listing as stored, to the byte', async () => {
  // 3 bytes a character (CJK) and 4 for every 2 (an emoji's surrogate pair): the page's bytes
  // outgrow the room sendList first sets aside (send-json.ts), which must then grow, not cut.
  const store = listingReadStore(app.running.db);
  const first = await app.call('GET', `${EXT}/listings?status=all&pageSize=1`, { secret });
  const code = first.body.data[0].dealer.locationCode;
  const description = `${'漢字'.repeat(4000)}🚗${'🚗'.repeat(2000)}ü`;
  await putListing(app, secret, 'json-wide', listingBody({ dealerLocationCode: code, description }));
  const page = await app.call('GET', `${EXT}/listings?status=all&pageSize=200`, { secret });
  assert.equal(page.status, 200, page.text);
  assert.equal(Number(page.headers['content-length']), Buffer.byteLength(page.text));
  const texts = rawElements(page.text, '{"data":[');
  assert.equal(texts.length, page.body.data.length);
  for (const [i, listed] of page.body.data.entries()) {
    const own = await store.get(listed.id, LIVE, listingJsonProjection(BASE));
    assert.equal(texts[i], own!.json);
  }
  assert.ok(page.body.data.some((l: { description: string }) => l.description === description));
  assert.deepEqual(Object.keys(page.body).slice(0, 1), ['data']);
});
