import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { listingJsonProjection, listingView } from '../src/api/external/v1/listings/view.js';
import { listingSchema, locationSchema } from '../src/api/schemas/resources.js';
import { listingReadStore } from '../src/store/listings/reads.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { putListing, setStatusOk } from './helpers/listings-api.js';

/**
 * Pages and single reads send the JSON the database builds (listingJsonSql); webhooks send the
 * listing view serialized by its schema. Both must be the same document, key order included, for
 * every kind of value: nulls, an optional field present and absent, text that JSON must escape,
 * fractions and tiny floats, images, features, a dealer with metadata and a parent.
 */
let app: TestApp;
let secret: string;
const BASE = 'https://cars.example/listings';

before(async () => {
  app = await bootApp();
  const tree = await createTree(app);
  await app.admin('PATCH', `/dealers/${tree.ids.A1a}`, {
    metadata: { crm: 'x"y\\z', nested: { b: [1, 2.5, null], a: true } },
    email: 'sales@a1a.example',
  });
  secret = (
    await createPartner(app, {
      roots: [tree.ids.A!],
      scopes: ['read:listings', 'read:locations', 'write:listings'],
    })
  ).secret;
  const bodies: Record<string, unknown>[] = [
    listingBody({ dealerLocationCode: tree.codes.A }),
    listingBody({
      dealerLocationCode: tree.codes.A1a,
      title: 'Quote " backslash \\ tab \t newline \n bell \u0007 emoji 🚗 line sep \u2028 ü',
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

test('the database-built JSON of a listing is the schema-serialized view, key for key and in order', async () => {
  const store = listingReadStore(app.running.db);
  const view = listingView(BASE);
  const page = await app.call('GET', `${EXT}/listings?status=all&pageSize=200`, { secret });
  assert.equal(page.status, 200, page.text);
  assert.equal(page.body.data.length, 3);
  for (const listed of page.body.data) {
    const stored = await store.get(listed.id);
    const fromSchema = JSON.stringify(listingSchema.parse(view(stored!)));
    // Re-serialized, number formats (1e-7 against 1e-07) and spacing no longer differ; keys,
    // their order and every value still must.
    assert.equal(JSON.stringify(listed), fromSchema);
    const single = await app.call('GET', `${EXT}/listings/${listed.id}`, { secret });
    assert.equal(JSON.stringify(single.body.data), fromSchema);
    // The projection's own text parses to the same document (no stray whitespace or escapes).
    const own = await store.get(listed.id, listingJsonProjection(BASE));
    assert.equal(JSON.stringify(JSON.parse(own!.json)), fromSchema);
  }
  const escaped = page.body.data.find((l: { title: string }) => l.title.startsWith('Quote'));
  assert.equal(
    escaped.title,
    'Quote " backslash \\ tab \t newline \n bell \u0007 emoji 🚗 line sep \u2028 ü',
  );
  assert.equal(escaped.location.latitude, 1e-7);
  assert.equal(escaped.historyReportUrl, 'https://www.car-pass.be/en/report/12345678901');
  const sold = page.body.data.find((l: { status: string }) => l.status === 'sold');
  assert.match(sold.soldAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.ok(!('historyReportUrl' in sold));
});

test('locations too: the database-built JSON equals the schema-serialized locations, with counts and pages', async () => {
  const auth = app.running.useCases.authentication;
  const partner = await auth.partnerOf((await auth.identify(secret)).record);
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
    const expected = await app.running.useCases.locations.find(partner.access, query);
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
