import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { configuredImageChecks } from '../src/background/image-checks.js';
import type { Loop } from '../src/background/loop.js';
import { bootApp, createTree, EXT, listingBody, type TestApp, type Tree } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { getListing, putListing } from './helpers/listings-api.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * What a partner reads of image checks (docs/images.md): each image's `check`, the listing's
 * `readiness` with every reason, the readiness and imageState filters, and the events a result
 * records; a check is not the partner's edit (updatedAt stays). Runs on PGlite, and on
 * PostgreSQL when DATABASE_URL is set.
 */

let app: TestApp;
let images: ImageServer;
let tree: Tree;
let secret: string;
let checker: Loop;

before(async () => {
  images = await startImageServer();
  app = await bootApp(IMAGE_TEST_ENV);
  tree = await createTree(app);
  secret = (await writer(app, [tree.ids.A!])).secret;
  checker = imageChecker(app);
});
after(async () => {
  await checker.stop();
  await app.close();
  await images.close();
});

/** The listing once none of its images is pending any more. */
async function checked(id: string): Promise<any> {
  let listing: any;
  await eventually(
    async () => {
      listing = await getListing(app, secret, id);
      return listing.images.every((i: any) => i.check.state !== 'pending');
    },
    () => JSON.stringify(listing?.images),
  );
  return listing;
}

const codes = (listing: any) => listing.readiness.reasons.map((r: { code: string }) => r.code);

async function list(query: string): Promise<string[]> {
  const reply = await app.call('GET', `${EXT}/listings?${query}&pageSize=100`, { secret });
  assert.equal(reply.status, 200, reply.text);
  return reply.body.data.map((l: { id: string }) => l.id);
}

describe('image checks in the read shape', () => {
  test('a new image is pending, and so is the listing: images_pending', async () => {
    const url = images.url('/photo.jpg?pending');
    const id = await putListing(app, secret, ref('pending'), listingBody({ images: [url] }));
    const listing = await getListing(app, secret, id);
    assert.deepEqual(listing.images[0], {
      url,
      position: 0,
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
    });
    assert.deepEqual(listing.readiness.live, false);
    assert.deepEqual(codes(listing), ['images_pending']);
  });

  test('results reach each image and the readiness; updatedAt stays; events are recorded', async () => {
    await checker.start();
    const ok = images.url('/photo.jpg?live');
    const gone = images.url('/missing.jpg?live');
    const id = await putListing(app, secret, ref('live'), listingBody({ images: [gone, ok] }));
    const before = await getListing(app, secret, id);
    const listing = await checked(id);
    assert.equal(listing.updatedAt, before.updatedAt);
    assert.deepEqual(listing.readiness, { live: true, reasons: [] });
    const [missing, photo] = listing.images;
    assert.equal(photo.check.state, 'ok');
    assert.equal(photo.check.format, 'jpeg');
    assert.ok(photo.check.width >= 640 && photo.check.checkedAt);
    assert.equal(photo.check.contentType, 'image/jpeg');
    assert.equal(missing.check.state, 'unreachable');
    assert.equal(missing.check.problem.code, 'not_found');
    assert.equal(listing.mainImageUrl, gone);

    const events = await app.running.db.query<{ type: string; data: any }>(
      'TestEvents',
      'SELECT type, data FROM events WHERE listing_id = $1 ORDER BY seq',
      [id],
    );
    const checkedEvents = events.filter((e) => e.type === 'listing.images_checked');
    assert.deepEqual(checkedEvents.map((e) => e.data.images[0].url).sort(), [gone, ok].sort());
    const readiness = events.filter((e) => e.type === 'listing.readiness_changed');
    assert.ok(readiness.length >= 1);
    assert.deepEqual(readiness.at(-1)!.data.to, { live: true, reasons: [] });
  });

  test('every reason a listing is not live', async () => {
    await checker.start();
    const broken = [images.url('/page.html?reasons'), images.url('/tiny.png?reasons')];
    const draft = await putListing(
      app,
      secret,
      ref('draft'),
      listingBody({ status: 'draft', price: null, images: [] }),
    );
    const noWorking = await putListing(app, secret, ref('broken'), listingBody({ images: broken }));
    const draftListing = await getListing(app, secret, draft);
    assert.deepEqual(codes(draftListing), ['not_active', 'no_price', 'no_images']);
    assert.match(draftListing.readiness.reasons[0].message, /draft/);
    const listing = await checked(noWorking);
    assert.deepEqual(codes(listing), ['no_working_image']);
    assert.deepEqual(
      listing.images.map((i: any) => i.check.state),
      ['not_an_image', 'too_small'],
    );
  });

  test('filters: readiness=live|not_live, imageState=<state>; a bad value is refused', async () => {
    await checker.start();
    const live = await putListing(
      app,
      secret,
      ref('f-live'),
      listingBody({ images: [images.url('/photo.png?filter')] }),
    );
    const dead = await putListing(
      app,
      secret,
      ref('f-dead'),
      listingBody({ images: [images.url('/broken.jpg?filter')] }),
    );
    await checked(live);
    await checked(dead);
    const liveIds = await list('readiness=live');
    const notLive = await list('readiness=not_live');
    assert.ok(liveIds.includes(live) && !liveIds.includes(dead));
    assert.ok(notLive.includes(dead) && !notLive.includes(live));
    const unreachable = await list('imageState=unreachable');
    assert.ok(unreachable.includes(dead) && !unreachable.includes(live));
    const reply = await app.call('GET', `${EXT}/listings?imageState=broken`, { secret });
    assert.equal(reply.status, 400, reply.text);
    const bad = await app.call('GET', `${EXT}/listings?readiness=yes`, { secret });
    assert.equal(bad.status, 400, bad.text);
    // meta.filters says so (it did not, 2026-11-30).
    const both = await app.call('GET', `${EXT}/listings?readiness=not_live&imageState=unreachable`, {
      secret,
    });
    assert.equal(both.status, 200, both.text);
    assert.equal(both.body.meta.filters.readiness, 'not_live');
    assert.equal(both.body.meta.filters.imageState, 'unreachable');
  });

  test('a listing written while a result commits, rendered from the older result, is set right', async () => {
    await checker.stop();
    const quick = configuredImageChecks(
      { ...app.config, IMAGE_CHECK_CONCURRENCY: 8, WRITE_TX_TIMEOUT_MS: 1000 },
      app.running.db,
      { logger: pino({ level: 'silent' }) },
      { everyMs: 50, random: () => 0 },
    );
    try {
      const url = images.url('/photo.gif?race');
      const id = await putListing(app, secret, ref('race'), listingBody({ images: [url] }));
      await quick.start();
      await checked(id);
      // What a write whose snapshot predates the result stores: the image as pending.
      await app.running.db.query(
        'TestStaleText',
        `UPDATE listings SET read_json = regexp_replace(read_json, '"check":\\{"state":"ok"[^}]*\\}', '"check":{"state":"pending","checkedAt":null,"format":null,"width":null,"height":null,"bytes":null,"contentType":null,"problem":null}')
         WHERE id = $1`,
        [id],
      );
      assert.equal((await getListing(app, secret, id)).images[0].check.state, 'pending');
      // The checker looks again once every write that could have raced the result is over.
      const listing = await checked(id);
      assert.equal(listing.images[0].check.state, 'ok');
    } finally {
      await quick.stop();
    }
  });
});
