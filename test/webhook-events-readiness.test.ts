import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Loop } from '../src/background/loop.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { bulkUpsert, putListing, putOk, remove, setStatusOk } from './helpers/listings-api.js';
import { ref, sleep } from './helpers/write-fixtures.js';

/**
 * `listing.readiness_changed` from a partner's own writes as well as from check results
 * (docs/webhooks.md, "Event types"): each write that changes an existing listing's readiness (PUT,
 * bulk upsert, PATCH, status change, DELETE) records its event in the same transaction, so the
 * events of a listing form one chain: each `from` is the previous `to`. A new listing's first
 * readiness is no event, nor is a write that leaves readiness as it was. Read through GET /events,
 * the outbox every endpoint walks.
 */
let app: TestApp;
let images: ImageServer;
let partner: { id: string; secret: string };
let checker: Loop;

before(async () => {
  images = await startImageServer();
  app = await bootApp(IMAGE_TEST_ENV);
  const tree = await createTree(app);
  partner = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'write:listings'],
  });
  checker = imageChecker(app, 4);
  await checker.start();
});
after(async () => {
  await checker.stop();
  await app.close();
  await images.close();
});

/** The readiness events of one listing, oldest first, as GET /events serves them. */
async function readinessEvents(secret: string, listingId: string): Promise<any[]> {
  const events: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const reply = await app.call(
      'GET',
      `${EXT}/events?types=listing.readiness_changed${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { secret },
    );
    assert.equal(reply.status, 200, reply.text);
    events.push(...reply.body.data.filter((e: any) => e.listingId === listingId));
    cursor = reply.body.pagination.nextCursor;
    if (!reply.body.pagination.hasMore) break;
  }
  return events;
}

/** A readiness as a short text: `live`, or its reasons' codes. */
const said = (r: { live: boolean; reasons: { code: string }[] }) =>
  r.live ? 'live' : r.reasons.map((x) => x.code).join('+');

/** Waits until the listing has `count` readiness events, and returns them. */
async function untilEvents(secret: string, listingId: string, count: number): Promise<any[]> {
  let events: any[] = [];
  await eventually(
    async () => {
      events = await readinessEvents(secret, listingId);
      return events.length >= count;
    },
    () => `expected ${count} readiness events, have ${JSON.stringify(events.map((e) => [e.from, e.to]))}`,
  );
  return events;
}

test('writes and check results make one chain of readiness events per listing', async () => {
  const { secret } = partner;
  const reference = ref('ready');
  const good = images.url('/photo.jpg?readiness-chain');
  // New: pending until its image is checked. Its first readiness is not an event.
  const id = await putListing(app, secret, reference, listingBody({ images: [good] }));
  // 1. The check result: pending → live.
  await untilEvents(secret, id, 1);

  // A write that leaves readiness as it was (mileage only): no event.
  await putOk(app, secret, reference, listingBody({ images: [good], mileage: 12000 }));
  // 2. A status change: live → not active.
  await setStatusOk(app, secret, reference, 'draft');
  // 3. A PATCH back to active: live again.
  const patched = await app.call('PATCH', `${EXT}/listings/${encodeURIComponent(reference)}`, {
    secret,
    body: { status: 'active' },
  });
  assert.equal(patched.status, 200, patched.text);
  // 4. A bulk upsert replacing the only working image by a new URL: pending again.
  const gone = images.url('/missing.jpg?readiness-chain');
  await bulkUpsert(app, secret, [
    { externalReference: reference, ...listingBody({ images: [gone], mileage: 12000 }) },
  ]);
  // 5. The new image's check: no working image.
  await untilEvents(secret, id, 5);
  // 6. Marked sold (DELETE).
  assert.equal((await remove(app, secret, reference)).status, 200);

  const events = await untilEvents(secret, id, 6);
  assert.deepEqual(
    events.map((e) => `${said(e.from)} → ${said(e.to)}`),
    [
      'images_pending → live',
      'live → not_active',
      'not_active → live',
      'live → images_pending',
      'images_pending → no_working_image',
      'no_working_image → not_active+no_working_image',
    ],
  );
  // The chain: each event starts where the one before ended, reasons and messages included.
  for (let i = 1; i < events.length; i++) assert.deepEqual(events[i].from, events[i - 1].to, `event ${i}`);
  const at = events.map((e) => e.occurredAt);
  assert.deepEqual(at, [...at].sort());
  // And it ends where the listing is.
  const read = await app.call('GET', `${EXT}/listings/${id}`, { secret });
  assert.deepEqual(read.body.data.readiness, events.at(-1).to);
});

test('a write that changes no readiness records no event; a new listing records none', async () => {
  const { secret } = partner;
  const reference = ref('ready-quiet');
  // No image: not live (no_images) from the start, and no check to wait for.
  const id = await putListing(app, secret, reference, listingBody({ images: [] }));
  await putOk(app, secret, reference, listingBody({ images: [], mileage: 5 }));
  await setStatusOk(app, secret, reference, 'active');
  await sleep(200);
  assert.deepEqual(await readinessEvents(secret, id), []);
  // The same listing, its status changed: now one event.
  await setStatusOk(app, secret, reference, 'draft');
  const [event, ...more] = await untilEvents(secret, id, 1);
  assert.deepEqual(more, []);
  assert.equal(`${said(event.from)} → ${said(event.to)}`, 'no_images → not_active+no_images');
});

test('test mode: a test listing’s readiness events are its test events only', async () => {
  const testSecret = (await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`))
    .secret;
  const reference = ref('ready-test');
  const id = await putListing(app, testSecret, reference, listingBody({ images: [] }));
  await setStatusOk(app, testSecret, reference, 'draft');
  const [event] = await untilEvents(testSecret, id, 1);
  assert.equal(`${said(event.from)} → ${said(event.to)}`, 'no_images → not_active+no_images');
  await sleep(200);
  assert.deepEqual(await readinessEvents(partner.secret, id), [], 'a live walk never reads a test event');
});
