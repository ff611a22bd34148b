import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { getListing, put, putOk, remove, setStatus } from './helpers/listings-api.js';
import { assertError, ref, SPEC_ENUMS, sleep, validationPaths, writer } from './helpers/write-fixtures.js';

let app: TestApp;
let tree: Tree;
let secret: string; // restricted to root A (one root: the default dealer)

before(async () => {
  app = await bootApp();
  tree = await createTree(app);
  secret = (await writer(app, [tree.ids.A!])).secret;
});
after(() => app.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('PUT /listings/{externalReference}', () => {
  test('201 created:true on create, 200 created:false on update, same listingId', async () => {
    const r = ref('put');
    const created = await put(app, secret, r, listingBody());
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body.data).sort(), [
      'created',
      'externalReference',
      'listingId',
      'outcome',
      'status',
    ]);
    assert.match(created.body.data.listingId, UUID);
    assert.deepEqual(
      { ...created.body.data, listingId: 'x' },
      {
        listingId: 'x',
        externalReference: r,
        status: 'active',
        created: true,
        outcome: 'created',
      },
    );
    const updated = await putOk(app, secret, r, listingBody({ mileage: 1000 }), 200);
    assert.deepEqual(updated, {
      listingId: created.body.data.listingId,
      externalReference: r,
      status: 'active',
      created: false,
      outcome: 'updated',
    });
  });

  test('GET shows the normalised listing: location nested, images, features, enum aliases, vin, date', async () => {
    const body = {
      title: '  BMW 320d Touring  ',
      description: 'Full options',
      price: 24999.5,
      currency: 'eur',
      brand: 'BMW',
      model: '3 Serie',
      variant: 'Touring',
      year: 2020,
      mileage: 45000,
      fuelType: 'Benzine',
      transmission: 'Automaat',
      bodyType: 'Estate',
      interiorMaterial: 'Leder',
      paintType: 'METALLIC',
      emissionClass: 'Euro 6d-TEMP',
      co2Type: 'WLTP',
      driveType: '4x4',
      vehicleType: 'marge',
      conditionTags: ['Occasion', 'schadevrij'],
      doors: 5,
      seats: 5,
      gears: 8,
      previousOwners: 1,
      powerKw: 140,
      co2Emission: 118.5,
      weight: 1600,
      fuelConsumption: 4.8,
      serviceHistory: true,
      warranty: false,
      warrantyMonths: 12,
      engine: '2.0 diesel',
      vin: 'wba8e9c50gk123456',
      firstRegistration: '2020-05',
      postalCode: '9000',
      city: 'Gent',
      province: 'Oost-Vlaanderen',
      latitude: 51.05,
      longitude: 3.72,
      images: ['https://img.example/1.jpg', 'https://img.example/2.jpg', 'http://img.example/3.jpg'],
      features: ['Navigatie', { category: 'comfort', name: 'Stoelverwarming' }],
    };
    const { listingId } = await putOk(app, secret, ref('norm'), body, 201);
    const got = await getListing(app, secret, listingId);
    const expected = {
      ...body,
      title: 'BMW 320d Touring',
      currency: 'EUR',
      fuelType: 'petrol',
      transmission: 'automatic',
      bodyType: 'station_wagon',
      interiorMaterial: 'leather',
      paintType: 'metallic',
      emissionClass: 'euro6d_temp',
      co2Type: 'wltp',
      driveType: 'awd',
      vehicleType: 'margin',
      conditionTags: ['used', 'accident_free'],
      vin: 'WBA8E9C50GK123456',
      firstRegistration: '2020-05-01',
      location: {
        postalCode: '9000',
        city: 'Gent',
        province: 'Oost-Vlaanderen',
        latitude: 51.05,
        longitude: 3.72,
      },
      // Not checked yet: the test service runs no image checker (IMAGE_CHECK_CONCURRENCY=0).
      images: body.images.map((url, position) => ({
        url,
        position,
        check: {
          state: 'pending',
          checkedAt: null,
          format: null,
          width: null,
          height: null,
          bytes: null,
          contentType: null,
          problem: null,
        },
      })),
      mainImageUrl: 'https://img.example/1.jpg',
      features: [
        { category: 'other', name: 'Navigatie' },
        { category: 'comfort', name: 'Stoelverwarming' },
      ],
      status: 'active',
      dealerProfileId: tree.ids.A,
    };
    for (const [key, value] of Object.entries(expected)) {
      if (['postalCode', 'city', 'province', 'latitude', 'longitude'].includes(key)) {
        assert.equal(got[key], undefined, `${key} must only be nested in location`);
      } else assert.deepEqual(got[key], value, key);
    }
    assert.equal(got.soldAt, undefined);
  });

  test('historyReportUrl: every alias, the default hosts or 11 digits; other hosts and http → 422', async () => {
    const accepted: [string, string, string][] = [
      [
        'historyReportUrl',
        'https://www.car-pass.be/nl/rapport/abc',
        'https://www.car-pass.be/nl/rapport/abc',
      ],
      ['historyReport', 'https://car-pass.be/r/1', 'https://car-pass.be/r/1'],
      ['history_report_url', 'https://CAR-PASS.be/x', 'https://car-pass.be/x'],
      ['historyReportNumber', '12345678901', '12345678901'],
    ];
    for (const [field, value, stored] of accepted) {
      const { listingId } = await putOk(app, secret, ref('hr'), listingBody({ [field]: value }), 201);
      assert.equal((await getListing(app, secret, listingId)).historyReportUrl, stored, field);
    }
    const rejected = [
      'http://www.car-pass.be/x',
      'https://evil.example/x',
      'https://car-pass.be.evil.example/x',
      '1234567890',
      '123456789012',
      'car-pass.be/x',
    ];
    for (const [i, value] of rejected.entries()) {
      const field = accepted[i % accepted.length]![0];
      assert.deepEqual(validationPaths(await put(app, secret, ref('hr'), listingBody({ [field]: value }))), [
        field,
      ]);
    }
  });

  test('replace: omitted optional fields are cleared; omitted status and dealer are kept', async () => {
    const r = ref('replace');
    const full = listingBody({
      status: 'pending',
      dealerLocationCode: tree.codes.A2,
      description: 'desc',
      mileage: 5000,
      city: 'Gent',
      images: ['https://img.example/a.jpg'],
      features: ['Trekhaak'],
      conditionTags: ['used'],
      historyReportUrl: '12345678901',
      vin: 'WBA8E9C50GK123456',
    });
    const { listingId } = await putOk(app, secret, r, full, 201);
    await putOk(app, secret, r, { title: 'Only a title', price: 1000 }, 200);
    const got = await getListing(app, secret, listingId);
    assert.equal(got.title, 'Only a title');
    assert.equal(got.status, 'pending');
    assert.equal(got.dealerProfileId, tree.ids.A2);
    for (const field of ['description', 'mileage', 'brand', 'model', 'year', 'vin', 'mainImageUrl'])
      assert.equal(got[field], null, field);
    assert.equal(got.historyReportUrl, undefined);
    assert.deepEqual(got.location, {
      postalCode: null,
      city: null,
      province: null,
      latitude: null,
      longitude: null,
    });
    assert.deepEqual([got.images, got.features, got.conditionTags], [[], [], []]);
    assert.equal(got.currency, 'EUR');
  });

  test('status: new listing without status is active; price required for active/pending only', async () => {
    assert.equal((await putOk(app, secret, ref('st'), listingBody(), 201)).status, 'active');
    const noPrice = listingBody({ price: undefined });
    assert.deepEqual(validationPaths(await put(app, secret, ref('st'), noPrice)), ['price']);
    assert.deepEqual(validationPaths(await put(app, secret, ref('st'), { ...noPrice, status: 'pending' })), [
      'price',
    ]);
    const draft = ref('st');
    assert.equal((await putOk(app, secret, draft, { ...noPrice, status: 'draft' }, 201)).status, 'draft');
    // Still a draft when the status is omitted, so still no price needed.
    assert.equal((await putOk(app, secret, draft, { ...noPrice, mileage: 1 }, 200)).status, 'draft');
    const sold = await putOk(app, secret, ref('st'), { ...noPrice, status: 'SOLD' }, 201);
    assert.equal(sold.status, 'sold');
    assert.match((await getListing(app, secret, sold.listingId)).soldAt, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    // An active listing loses its price: refused.
    const active = ref('st');
    await putOk(app, secret, active, listingBody(), 201);
    assert.deepEqual(validationPaths(await put(app, secret, active, noPrice)), ['price']);
  });

  test('read-only fields in the body are ignored; the slug is fixed at creation', async () => {
    const r = ref('ro');
    const readOnly = {
      id: randomUUID(),
      slug: 'my-own-slug',
      listingUrl: 'https://evil.example/x',
      externalProvider: 'someone-else',
      dealer: { id: tree.ids.B },
      createdAt: '2000-01-01T00:00:00.000Z',
      updatedAt: '2000-01-01T00:00:00.000Z',
      soldAt: '2000-01-01T00:00:00.000Z',
      mainImageUrl: 'https://evil.example/main.jpg',
    };
    const { listingId } = await putOk(app, secret, r, listingBody(readOnly), 201);
    assert.notEqual(listingId, readOnly.id);
    const got = await getListing(app, secret, listingId);
    assert.match(got.slug, /^volkswagen-golf-2021-[a-z0-9]+$/);
    assert.equal(got.listingUrl, `https://cars.example/listings/${got.slug}`);
    assert.notEqual(got.externalProvider, 'someone-else');
    assert.equal(got.dealerProfileId, tree.ids.A);
    assert.ok(got.createdAt > '2020' && got.updatedAt > '2020', JSON.stringify(got));
    assert.equal(got.soldAt, undefined);
    assert.equal(got.mainImageUrl, null);
    await putOk(app, secret, r, listingBody({ brand: 'Audi', model: 'A3', year: 2019, ...readOnly }), 200);
    const after = await getListing(app, secret, listingId);
    assert.equal(after.brand, 'Audi');
    assert.equal(after.slug, got.slug);
    assert.equal(after.createdAt, got.createdAt);
  });

  test('a reference in the body is taken only when it is the path’s: another is reference_mismatch', async () => {
    // Found by review (2026-11-30): a body's reference of another value was ignored without a
    // word (the listing of the path was written).
    const r = ref('same');
    const { listingId } = await putOk(
      app,
      secret,
      r,
      listingBody({ externalReference: r, external_reference: r }),
      201,
    );
    // A listing read back is sent back as it is.
    const read = await getListing(app, secret, listingId);
    assert.equal((await putOk(app, secret, r, read, 200)).outcome, 'unchanged');
    const other = ref('other');
    for (const sent of [
      { externalReference: other },
      { external_reference: other },
      { externalReference: null },
      { externalReference: 7 },
    ]) {
      const reply = await put(app, secret, r, listingBody({ mileage: 5, ...sent }));
      const error = assertError(reply, 422, 'VALIDATION_FAILED');
      const [name] = Object.keys(sent);
      assert.deepEqual(
        error.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
        [[name, 'reference_mismatch']],
        reply.text,
      );
      assert.match(error.issues[0].message, new RegExp(`must be "${r}"`));
    }
    // Nothing was written, and the other reference names no listing.
    assert.equal((await getListing(app, secret, listingId)).mileage, read.mileage);
    assert.equal(
      (await put(app, secret, other, listingBody(), { query: '?dryRun=true' })).body.data.outcome,
      'would_create',
    );
  });

  test('resending identical content: outcome unchanged, updatedAt kept; a real change moves it', async () => {
    const r = ref('noop');
    const body = listingBody({
      fuelType: 'petrol',
      features: ['ABS'],
      images: ['https://img.example/1.jpg'],
      latitude: 50.1,
    });
    const { listingId } = await putOk(app, secret, r, body, 201);
    const first = await getListing(app, secret, listingId);
    await sleep(5);
    const again = await putOk(app, secret, r, body, 200);
    assert.deepEqual([again.outcome, again.created, again.listingId], ['unchanged', false, listingId]);
    assert.equal((await getListing(app, secret, listingId)).updatedAt, first.updatedAt);
    // Same content spelled differently (alias, case, flat vs nested location) is no change either.
    const respelled = { ...body, fuelType: 'Benzine', latitude: undefined, location: { latitude: 50.1 } };
    assert.equal((await putOk(app, secret, r, respelled, 200)).outcome, 'unchanged');
    const changed = await putOk(app, secret, r, { ...body, mileage: 10 }, 200);
    assert.equal(changed.outcome, 'updated');
    assert.ok((await getListing(app, secret, listingId)).updatedAt > first.updatedAt);
  });

  test('422 VALIDATION_FAILED lists every failing field at once', async () => {
    const bad = {
      title: '   ',
      price: 0,
      year: 1800,
      mileage: -1,
      vin: 'WBA8E9C50GK12345I',
      firstRegistration: '2099-01',
      images: ['ftp://x'],
      fuelType: 'steam',
      currency: 'USD',
      doors: 11,
      warrantyMonths: 241,
    };
    const reply = await put(app, secret, ref('bad'), bad);
    assert.deepEqual(validationPaths(reply), [
      'currency',
      'doors',
      'firstRegistration',
      'fuelType',
      'images.0',
      'mileage',
      'price',
      'title',
      'vin',
      'warrantyMonths',
      'year',
    ]);
    const fuel = reply.body.error.issues.find((i: { path: string }) => i.path === 'fuelType');
    for (const value of SPEC_ENUMS.fuelType!) assert.match(fuel.message, new RegExp(`\\b${value}\\b`));
    const images = Array.from({ length: 51 }, (_, i) => `https://img.example/${i}.jpg`);
    const more = { title: 'x'.repeat(201), price: 10.555, year: new Date().getUTCFullYear() + 2, images };
    assert.deepEqual(validationPaths(await put(app, secret, ref('bad'), more)), [
      'images',
      'price',
      'title',
      'year',
    ]);
    // Missing title, wrong types.
    assert.deepEqual(validationPaths(await put(app, secret, ref('bad'), { price: '100', mileage: 1.5 })), [
      'mileage',
      'price',
      'title',
    ]);
  });

  test('bounds: next year and 128-character references are accepted', async () => {
    const year = new Date().getUTCFullYear() + 1;
    const long = 'R'.repeat(128);
    assert.equal((await putOk(app, secret, long, listingBody({ year }), 201)).externalReference, long);
  });

  test('prices are stored to the cent: sub-cent noise is no price and no change', async () => {
    // 1e-9 rounds to 0.00: it must not pass as a price > 0.
    assert.deepEqual(validationPaths(await put(app, secret, ref('cent'), listingBody({ price: 1e-9 }))), [
      'price',
    ]);
    const r = ref('cent');
    const noisy = listingBody({ price: 0.1 + 0.2, fuelConsumption: 4.1 + 0.2 });
    const { listingId } = await putOk(app, secret, r, noisy, 201);
    const got = await getListing(app, secret, listingId);
    assert.deepEqual([got.price, got.fuelConsumption], [0.3, 4.3]);
    assert.equal((await putOk(app, secret, r, noisy, 200)).outcome, 'unchanged');
  });

  test('text PostgreSQL cannot store (NUL, lone surrogate) is a 422, never a 500', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['title', { title: 'a\u0000b' }],
      ['description', { description: 'x\ud800' }],
      ['features.0', { features: ['nav\u0000'] }],
      ['images.0', { images: ['https://img.example/\u0000.jpg'] }],
      ['dealerLocationCode', { dealerLocationCode: `${tree.codes.A}\u0000` }],
    ];
    for (const [path, fields] of cases) {
      const reply = await put(app, secret, ref('nul'), listingBody(fields));
      assert.deepEqual(validationPaths(reply), [path], path);
    }
  });

  test('bad references → 400 INVALID_REFERENCE', async () => {
    for (const bad of ['R'.repeat(129), 'a%01b', '%20abc', 'abc%20', 'a%0Ab']) {
      assertError(await put(app, secret, bad, listingBody(), { rawRef: true }), 400, 'INVALID_REFERENCE');
    }
  });

  test('bodies: not an object → 400 INVALID_BODY; broken JSON → 400 INVALID_JSON', async () => {
    for (const body of [[listingBody()], 'a string', null, 42]) {
      assertError(await put(app, secret, ref('body'), body), 400, 'INVALID_BODY');
    }
    assertError(await app.call('PUT', `${EXT}/listings/${ref('body')}`, { secret }), 400, 'INVALID_BODY');
    const broken = await app.call('PUT', `${EXT}/listings/${ref('body')}`, {
      secret,
      raw: '{"title": "x",',
      headers: { 'content-type': 'application/json' },
    });
    assertError(broken, 400, 'INVALID_JSON');
  });

  test('dryRun=true says what it would do and writes nothing', async () => {
    const r = ref('dry');
    const dry = await put(app, secret, r, listingBody(), { query: '?dryRun=true' });
    // Issue 41: a dry run answered 201 with the id of a listing that never existed.
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(
      [dry.body.data.created, dry.body.data.outcome, dry.body.data.listingId, dry.body.meta.dryRun],
      [false, 'would_create', null, true],
    );
    assert.equal(dry.headers.location, undefined);
    const real = await putOk(app, secret, r, listingBody(), 201);
    assert.equal(real.created, true);
    const before = await getListing(app, secret, real.listingId);
    const dryUpdate = await put(app, secret, r, listingBody({ title: 'Changed' }), { query: '?dryRun=1' });
    assert.equal(dryUpdate.status, 200);
    assert.deepEqual(dryUpdate.body.data, { ...real, created: false, outcome: 'would_update', dryRun: true });
    assert.deepEqual(await getListing(app, secret, real.listingId), before);
  });

  test('writing needs write:listings → 403 INSUFFICIENT_SCOPE', async () => {
    const reader = await createPartner(app, { roots: [tree.ids.A!] });
    assertError(await put(app, reader.secret, ref('scope'), listingBody()), 403, 'INSUFFICIENT_SCOPE');
    assertError(await setStatus(app, reader.secret, 'x', { status: 'sold' }), 403, 'INSUFFICIENT_SCOPE');
    assertError(await remove(app, reader.secret, 'x'), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe('dealer choice and access', () => {
  test('dealerProfileId, else dealerLocationCode (any case), else the only root', async () => {
    const byId = await putOk(app, secret, ref('d'), listingBody({ dealerProfileId: tree.ids.A1 }), 201);
    assert.equal((await getListing(app, secret, byId.listingId)).dealerProfileId, tree.ids.A1);
    const code = tree.codes.A1a!.toUpperCase();
    const byCode = await putOk(app, secret, ref('d'), listingBody({ dealerLocationCode: code }), 201);
    assert.equal((await getListing(app, secret, byCode.listingId)).dealerProfileId, tree.ids.A1a);
    const both = listingBody({ dealerProfileId: tree.ids.A2, dealerLocationCode: tree.codes.A1 });
    const idWins = await putOk(app, secret, ref('d'), both, 201);
    assert.equal((await getListing(app, secret, idWins.listingId)).dealerProfileId, tree.ids.A2);
    const root = await putOk(app, secret, ref('d'), listingBody(), 201);
    assert.equal((await getListing(app, secret, root.listingId)).dealerProfileId, tree.ids.A);
  });

  test('no dealer and no single root → 422 at dealerProfileId', async () => {
    for (const partner of [await writer(app, [tree.ids.A!, tree.ids.B!]), await writer(app, 'global')]) {
      assert.deepEqual(validationPaths(await put(app, partner.secret, ref('d'), listingBody())), [
        'dealerProfileId',
      ]);
      await putOk(app, partner.secret, ref('d'), listingBody({ dealerLocationCode: tree.codes.B1 }), 201);
    }
    assert.deepEqual(
      validationPaths(await put(app, secret, ref('d'), listingBody({ dealerProfileId: 'nope' }))),
      ['dealerProfileId'],
    );
  });

  test('unknown or out-of-scope dealer → 403 PROFILE_FORBIDDEN', async () => {
    const bodies = [
      { dealerProfileId: tree.ids.B },
      { dealerProfileId: randomUUID() },
      { dealerLocationCode: tree.codes.B1 },
      { dealerLocationCode: 'no-such-code-xyz' },
    ];
    for (const fields of bodies) {
      assertError(await put(app, secret, ref('d'), listingBody(fields)), 403, 'PROFILE_FORBIDDEN');
    }
  });

  test('after the operator narrows access, writes to a listing now out of scope → 403', async () => {
    const partner = await writer(app, [tree.ids.A!, tree.ids.B!]);
    const r = ref('narrow');
    const { listingId } = await putOk(
      app,
      partner.secret,
      r,
      listingBody({ dealerProfileId: tree.ids.B1 }),
      201,
    );
    await app.admin('PATCH', `/partners/${partner.id}`, {
      access: { scope: 'restricted', rootProfileIds: [tree.ids.A] },
    });
    assertError(await put(app, partner.secret, r, listingBody()), 403, 'PROFILE_FORBIDDEN');
    const moveBack = listingBody({ dealerProfileId: tree.ids.A });
    assertError(await put(app, partner.secret, r, moveBack), 403, 'PROFILE_FORBIDDEN');
    assertError(await setStatus(app, partner.secret, r, { status: 'sold' }), 403, 'PROFILE_FORBIDDEN');
    assertError(await remove(app, partner.secret, r), 403, 'PROFILE_FORBIDDEN');
    const global = await writer(app, 'global');
    assert.equal((await getListing(app, global.secret, listingId)).status, 'active');
  });
});

describe('partner isolation', () => {
  test('same reference, two partners, two listings; B cannot touch A’s listing', async () => {
    const a = await writer(app, [tree.ids.A!]);
    const b = await writer(app, [tree.ids.A!]);
    const shared = ref('shared');
    const la = await putOk(app, a.secret, shared, listingBody({ title: 'A' }), 201);
    const lb = await putOk(app, b.secret, shared, listingBody({ title: 'B' }), 201);
    assert.notEqual(la.listingId, lb.listingId);
    const onlyA = ref('only-a');
    const mine = await putOk(app, a.secret, onlyA, listingBody({ title: 'Mine' }), 201);
    assertError(await setStatus(app, b.secret, onlyA, { status: 'sold' }), 404, 'NOT_FOUND');
    assertError(await remove(app, b.secret, onlyA), 404, 'NOT_FOUND');
    const theirs = await putOk(app, b.secret, onlyA, listingBody({ title: 'Theirs' }), 201);
    assert.notEqual(theirs.listingId, mine.listingId);
    const got = await getListing(app, a.secret, mine.listingId);
    assert.deepEqual([got.title, got.status], ['Mine', 'active']);
    assert.equal((await getListing(app, a.secret, la.listingId)).title, 'A');
  });
});

describe('POST /listings/{ref}/status and DELETE', () => {
  test('status change: 200 {listingId, externalReference, status}; soldAt follows sold', async () => {
    const r = ref('status');
    const { listingId } = await putOk(app, secret, r, listingBody(), 201);
    const sold = await setStatus(app, secret, r, { status: 'sold' });
    assert.equal(sold.status, 200, sold.text);
    assert.deepEqual(sold.body.data, { listingId, externalReference: r, status: 'sold', outcome: 'updated' });
    const soldAt = (await getListing(app, secret, listingId)).soldAt;
    assert.match(soldAt, /Z$/);
    await sleep(5);
    assert.equal((await setStatus(app, secret, r, { status: ' Sold ' })).status, 200);
    assert.equal((await getListing(app, secret, listingId)).soldAt, soldAt);
    await putOk(app, secret, r, listingBody({ mileage: 5 }), 200);
    assert.equal((await getListing(app, secret, listingId)).soldAt, soldAt);
    for (const status of ['pending', 'draft', 'active']) {
      const reply = await setStatus(app, secret, r, { status });
      assert.deepEqual(reply.body.data, { listingId, externalReference: r, status, outcome: 'updated' });
      const got = await getListing(app, secret, listingId);
      assert.deepEqual([got.status, got.soldAt], [status, undefined]);
    }
  });

  test('status change to active or pending needs a price: a draft without one gets 422, stays a draft', async () => {
    const r = ref('status');
    const { listingId } = await putOk(
      app,
      secret,
      r,
      listingBody({ price: undefined, status: 'draft' }),
      201,
    );
    for (const status of ['active', 'pending']) {
      const refused = await setStatus(app, secret, r, { status });
      assertError(refused, 422, 'VALIDATION_FAILED');
      assert.deepEqual(validationPaths(refused), ['price']);
    }
    assert.equal((await getListing(app, secret, listingId)).status, 'draft');
    assert.equal((await setStatus(app, secret, r, { status: 'sold' })).status, 200);
  });

  test('status errors: 422 invalid/missing, 400 non-object or broken JSON, 404 unknown', async () => {
    const r = ref('status');
    await putOk(app, secret, r, listingBody(), 201);
    for (const body of [{ status: 'archived' }, {}, { status: 5 }, { status: '' }]) {
      assert.deepEqual(validationPaths(await setStatus(app, secret, r, body)), ['status']);
    }
    for (const body of [['sold'], 'sold', null]) {
      assertError(await setStatus(app, secret, r, body), 400, 'INVALID_BODY');
    }
    const broken = await app.call('POST', `${EXT}/listings/${r}/status`, {
      secret,
      raw: '{status: sold}',
      headers: { 'content-type': 'application/json' },
    });
    assertError(broken, 400, 'INVALID_JSON');
    assertError(await setStatus(app, secret, ref('unknown'), { status: 'sold' }), 404, 'NOT_FOUND');
  });

  test('DELETE: sold, idempotent with the same body; soldAt kept; unknown → 404', async () => {
    const r = ref('del');
    const { listingId } = await putOk(app, secret, r, listingBody({ status: 'pending' }), 201);
    const first = await remove(app, secret, r);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.data, {
      listingId,
      externalReference: r,
      status: 'sold',
      outcome: 'updated',
    });
    const soldAt = (await getListing(app, secret, listingId)).soldAt;
    assert.match(soldAt, /Z$/);
    await sleep(5);
    const second = await remove(app, secret, r);
    assert.equal(second.status, 200);
    // Idempotent: the same answer, but for the outcome (already sold).
    assert.deepEqual(second.body, { ...first.body, data: { ...first.body.data, outcome: 'unchanged' } });
    const got = await getListing(app, secret, listingId);
    assert.deepEqual([got.status, got.soldAt], ['sold', soldAt]);
    assertError(await remove(app, secret, ref('unknown')), 404, 'NOT_FOUND');
    const bad = await app.call('DELETE', `${EXT}/listings/%20x`, { secret });
    assertError(bad, 400, 'INVALID_REFERENCE');
  });
});

describe('GET /reference/enums', () => {
  test('every enumeration with values and aliases; needs read:listings', async () => {
    const reply = await app.call('GET', `${EXT}/reference/enums`, { secret });
    assert.equal(reply.status, 200, reply.text);
    const data = reply.body.data;
    assert.deepEqual(Object.keys(data).sort(), Object.keys(SPEC_ENUMS).sort());
    for (const [name, values] of Object.entries(SPEC_ENUMS)) {
      assert.deepEqual(data[name].values, values, name);
      assert.equal(typeof data[name].aliases, 'object');
      for (const [alias, target] of Object.entries(data[name].aliases))
        assert.ok(values.includes(target as string), `${name}.${alias} → ${target}`);
    }
    assert.equal(data.fuelType.aliases.gasoline, 'petrol');
    assert.equal(data.fuelType.aliases.benzine, 'petrol');
    assert.equal(data.transmission.aliases.automaat, 'automatic');
    const writeOnly = await createPartner(app, { roots: [tree.ids.A!], scopes: ['write:listings'] });
    const refused = await app.call('GET', `${EXT}/reference/enums`, { secret: writeOnly.secret });
    assert.match(assertError(refused, 403, 'INSUFFICIENT_SCOPE').message, /read:listings/);
    assertError(await app.call('GET', `${EXT}/reference/enums`), 401, 'UNAUTHORIZED');
  });
});
