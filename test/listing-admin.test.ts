import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Loop } from '../src/background/loop.js';
import { bootApp, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { getListing, putListing } from './helpers/listings-api.js';
import { assertError } from './helpers/read-fixtures.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * GET /api/admin/v1/listings/{id} and GET /api/admin/v1/partners/{id}/listings/{externalReference}
 * (issue 43; docs/operations.md, "One listing"): any partner's listing, live or test, exactly as
 * its partner reads it, with its owner, its mode and each image's place in the checker's schedule.
 * Images on a local image server, checked by the checker. PGlite, and PostgreSQL with DATABASE_URL.
 */
let app: TestApp;
let images: ImageServer;
let checker: Loop;
let partner: { id: string; secret: string };
let other: { id: string; secret: string };
let partnerName: string;
const refs = { mixed: ref('mixed'), broken: ref('broken') };
const ids: Record<string, string> = {};

const admin = (path: string, headers: Record<string, string> = {}) =>
  app.call('GET', `/api/admin/v1${path}`, {
    headers: { authorization: `Bearer ${app.running.adminToken}`, ...headers },
  });

before(async () => {
  images = await startImageServer();
  app = await bootApp(IMAGE_TEST_ENV);
  const tree = await createTree(app);
  partner = await writer(app, [tree.ids.A!]);
  other = await writer(app, [tree.ids.A!]);
  partnerName = (await app.admin('GET', `/partners/${partner.id}`)).name;
  checker = imageChecker(app);
  const u = (p: string) => images.url(p);
  // One broken image between two that work: the listing is live, the broken one says why it is broken.
  ids.mixed = await putListing(
    app,
    partner.secret,
    refs.mixed,
    listingBody({ images: [u('/photo.jpg?la'), u('/missing.jpg?la'), u('/photo.png?la')] }),
  );
  ids.broken = await putListing(
    app,
    partner.secret,
    refs.broken,
    listingBody({ images: [u('/page.html?la'), u('/missing.jpg?la')] }),
  );
});
after(async () => {
  await checker?.stop();
  await app?.close();
  await images?.close();
});

describe('one listing for an operator', () => {
  test('before any check: the partner’s read, the owner, live mode, every image due and never tried', async () => {
    const found = await app.admin('GET', `/listings/${ids.mixed}`);
    assert.deepEqual(found.listing, await getListing(app, partner.secret, ids.mixed!));
    assert.deepEqual(found.partner, { id: partner.id, name: partnerName });
    assert.equal(found.mode, 'live');
    assert.deepEqual(
      found.listing.readiness.reasons.map((r: any) => r.code),
      ['images_pending'],
    );
    assert.deepEqual(
      found.images.map((i: any) => [i.url, i.position, i.lastCheckedAt, i.attempts, i.failures]),
      found.listing.images.map((i: any) => [i.url, i.position, null, 0, 0]),
    );
    for (const i of found.images) assert.ok(Date.parse(i.nextCheckAt) <= Date.now() + 1000, i.nextCheckAt);
  });

  test('after the checks: the broken image’s problem beside the good ones, readiness, and each image’s next check', async () => {
    await checker.start();
    let read: any;
    await eventually(
      async () => {
        read = await getListing(app, partner.secret, ids.broken!);
        const mixed = await getListing(app, partner.secret, ids.mixed!);
        return [...read.images, ...mixed.images].every((i: any) => i.check.state !== 'pending');
      },
      () => JSON.stringify(read?.images),
    );
    await checker.stop();

    const found = await app.admin('GET', `/listings/${ids.mixed}`);
    assert.deepEqual(found.listing, await getListing(app, partner.secret, ids.mixed!));
    assert.deepEqual(found.listing.readiness, { live: true, reasons: [] });
    assert.deepEqual(
      found.listing.images.map((i: any) => [i.check.state, i.check.problem?.code ?? null]),
      [
        ['ok', null],
        ['unreachable', 'not_found'],
        ['ok', null],
      ],
    );
    const [good, bad] = found.listing.images;
    assert.ok(good.check.width > 0 && good.check.height > 0, JSON.stringify(good.check));
    assert.ok(good.check.bytes > 0 && good.check.contentType === 'image/jpeg', JSON.stringify(good.check));
    assert.equal(bad.check.width, null);
    // The schedule: each tried once, the broken one counted as a failure and due again later.
    for (const [i, s] of found.images.entries()) {
      assert.equal(s.url, found.listing.images[i].url);
      assert.equal(s.attempts, 1, s.url);
      assert.equal(s.failures, i === 1 ? 1 : 0, s.url);
      assert.equal(s.checking, false);
      assert.ok(s.lastCheckedAt, s.url);
      assert.ok(Date.parse(s.nextCheckAt) > Date.parse(s.lastCheckedAt), JSON.stringify(s));
    }

    const broken = await app.admin('GET', `/listings/${ids.broken}`);
    assert.deepEqual(broken.listing, read);
    assert.deepEqual(
      broken.listing.readiness.reasons.map((r: any) => r.code),
      ['no_working_image'],
    );
    assert.deepEqual(
      broken.listing.images.map((i: any) => i.check.problem.code),
      ['html_page', 'not_found'],
    );
    // The URL both listings share has one check, one schedule.
    assert.deepEqual(broken.images[1], { ...found.images[1], position: 1 });
  });

  test('by the partner’s reference: the same answer; test mode apart', async () => {
    const byId = await app.admin('GET', `/listings/${ids.mixed}`);
    const byRef = await app.admin(
      'GET',
      `/partners/${partner.id}/listings/${encodeURIComponent(refs.mixed)}`,
    );
    assert.deepEqual(byRef, byId);
    assert.deepEqual(
      await app.admin('GET', `/partners/${partner.id}/listings/${refs.mixed}?test=false`),
      byId,
    );

    // The partner's test listing under the same reference: found with test=true, and by its id.
    const { secret: testSecret } = await app.admin('POST', `/partners/${partner.id}/test-secret`);
    const testId = await putListing(
      app,
      testSecret,
      refs.mixed,
      listingBody({ title: 'A test car', images: [] }),
    );
    assert.notEqual(testId, ids.mixed);
    const test = await app.admin('GET', `/partners/${partner.id}/listings/${refs.mixed}?test=true`);
    assert.equal(test.mode, 'test');
    assert.equal(test.listing.id, testId);
    assert.equal(test.listing.title, 'A test car');
    assert.deepEqual(
      test.listing.readiness.reasons.map((r: any) => r.code),
      ['no_images'],
    );
    assert.deepEqual(test.images, []);
    assert.deepEqual(await app.admin('GET', `/listings/${testId}`), test);
    // Live again: untouched by the test write.
    assert.deepEqual(await app.admin('GET', `/partners/${partner.id}/listings/${refs.mixed}`), byId);
  });

  test('unknown: 404 NOT_FOUND saying what is missing', async () => {
    const none = '00000000-0000-4000-8000-000000000000';
    let error = assertError(await admin(`/listings/${none}`), 404, 'NOT_FOUND');
    assert.equal(error.message, `No listing ${none}.`);
    error = assertError(await admin(`/partners/${partner.id}/listings/nope-1`), 404, 'NOT_FOUND');
    assert.equal(error.message, `Partner ${partner.id} has no live listing with externalReference "nope-1".`);
    // References are each partner's own: another partner's is not found under this one.
    error = assertError(await admin(`/partners/${other.id}/listings/${refs.mixed}`), 404, 'NOT_FOUND');
    assert.match(error.message, /has no live listing/);
    error = assertError(
      await admin(`/partners/${partner.id}/listings/${refs.broken}?test=true`),
      404,
      'NOT_FOUND',
    );
    assert.match(error.message, /has no test listing/);
    error = assertError(await admin(`/partners/${none}/listings/${refs.mixed}`), 404, 'NOT_FOUND');
    assert.equal(error.message, `No partner ${none}.`);
  });

  test('malformed: 400 for an id, a reference, a test flag or an unknown parameter', async () => {
    let error = assertError(await admin('/listings/not-a-uuid'), 400, 'INVALID_QUERY');
    assert.ok(
      error.issues.some((i: any) => i.path === 'params.id'),
      JSON.stringify(error.issues),
    );
    // A reference where the id goes is still no id.
    assertError(await admin(`/listings/${refs.mixed}`), 400, 'INVALID_QUERY');
    assertError(await admin(`/partners/not-a-uuid/listings/${refs.mixed}`), 400, 'INVALID_QUERY');
    assertError(await admin(`/partners/${partner.id}/listings/${'x'.repeat(300)}`), 400, 'INVALID_REFERENCE');
    error = assertError(
      await admin(`/partners/${partner.id}/listings/${refs.mixed}?test=maybe`),
      400,
      'INVALID_QUERY',
    );
    assert.ok(
      error.issues.some((i: any) => i.path === 'query.test'),
      JSON.stringify(error.issues),
    );
    assertError(await admin(`/listings/${ids.mixed}?verbose=1`), 400, 'INVALID_QUERY');
  });

  test('refused without an operator credential, and with a partner’s secret', async () => {
    for (const path of [`/listings/${ids.mixed}`, `/partners/${partner.id}/listings/${refs.mixed}`]) {
      const anonymous = await app.call('GET', `/api/admin/v1${path}`);
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.equal(anonymous.body.data, undefined);
      const asPartner = await app.call('GET', `/api/admin/v1${path}`, { secret: partner.secret });
      assert.equal(asPartner.status, 401, asPartner.text);
      assert.equal(asPartner.body.data, undefined);
    }
    // The partner API is unchanged: no operator view there.
    assert.equal(
      (await app.call('GET', `${EXT}/listings/${ids.mixed}`, { secret: partner.secret })).status,
      200,
    );
  });
});
