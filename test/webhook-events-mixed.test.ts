import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Loop } from '../src/background/loop.js';
import { EVENT_TYPE_NAMES } from '../src/domain/events/registry.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { getListing, putListing } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';
import { ref } from './helpers/write-fixtures.js';

/**
 * One endpoint subscribed to all three types (docs/webhooks.md, "Event types", "Ordering"), fed by
 * real writes and real check results of the image checker against a local image server: each
 * type's deliveries come signed, in order per listing; the listing snapshots in changedAt order
 * with the partner's updatedAt kept; the events saying from what to what, in the order the
 * changes happened (pending → ok, then a new URL: pending → unreachable; readiness live, pending
 * again by the partner's write, then no working image).
 */
let app: TestApp;
let images: ImageServer;
let secret: string;
let checker: Loop;
let receiver: Receiver;

before(async () => {
  images = await startImageServer();
  app = await bootApp({
    ...IMAGE_TEST_ENV,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const tree = await createTree(app);
  secret = (
    await createPartner(app, {
      roots: [tree.ids.A!],
      scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
    })
  ).secret;
  checker = imageChecker(app, 4);
  receiver = await startReceiver();
});
after(async () => {
  await checker.stop();
  await receiver.close();
  await app.close();
  await images.close();
});

/** What the receiver applied (2xx, each webhook-id once), flattened: one row per listing or event. */
function applied(type: string, listingId: string): Record<string, any>[] {
  const ids = new Set<string>();
  const rows: Record<string, any>[] = [];
  for (const r of receiver.requests) {
    if (r.answered !== 200 || r.type !== type || ids.has(r.id)) continue;
    ids.add(r.id);
    for (const item of JSON.parse(r.raw.body).data) {
      if ((item.listingId ?? item.id) === listingId) rows.push(item);
    }
  }
  return rows;
}

test('all three types, across a write and check results: each signed, in order per listing', async () => {
  const reply = await app.call('POST', `${EXT}/webhooks`, {
    secret,
    body: { url: receiver.url, events: [...EVENT_TYPE_NAMES] },
  });
  assert.equal(reply.status, 201, reply.text);
  receiver.secrets.push(reply.body.data.secret);
  // One failed answer on the way: a retry must not reorder anything.
  receiver.script.push(500);
  await checker.start();

  const reference = ref('mixed');
  const good = images.url('/photo.jpg?mixed');
  const id = await putListing(app, secret, reference, listingBody({ images: [good] }));
  await eventually(
    () => applied('listing.readiness_changed', id).some((e) => e.to.live),
    () => `not live yet: ${JSON.stringify(receiver.requests.map((r) => r.type))}`,
  );

  // A write that replaces the image by a URL answering 404.
  const gone = images.url('/missing.jpg?mixed');
  const rewritten = await putListing(app, secret, reference, listingBody({ images: [gone] }));
  assert.equal(rewritten, id);
  const written = await getListing(app, secret, id);
  await eventually(
    () =>
      applied('listing.images_checked', id).some((e) => e.images.some((i: any) => i.to === 'unreachable')) &&
      applied('listings.changed', id).at(-1)?.images[0].check.state === 'unreachable' &&
      applied('listing.readiness_changed', id).at(-1)?.to.reasons[0]?.code === 'no_working_image',
    () => `not delivered: ${JSON.stringify(receiver.requests.map((r) => [r.type, r.answered]))}`,
  );

  // Every request verified (the receiver checks each signature with standardwebhooks).
  assert.deepEqual(receiver.problems, []);
  assert.ok(
    receiver.requests.some((r) => r.answered === 500),
    'a failed attempt was retried',
  );

  // Snapshots: in changedAt order, the check results among them with the partner's updatedAt.
  const snapshots = applied('listings.changed', id);
  const positions = snapshots.map((l) => l.changedAt);
  assert.deepEqual(positions, [...positions].sort(), 'listings.changed in changedAt order');
  const states = snapshots.map(
    (l) => `${l.images[0].url === good ? 'good' : 'gone'}:${l.images[0].check.state}`,
  );
  assert.deepEqual(states.at(-1), 'gone:unreachable');
  assert.equal(snapshots.at(-1)!.updatedAt, written.updatedAt, 'a check is not the partner’s edit');
  assert.ok(snapshots.at(-1)!.changedAt > written.updatedAt, 'the result moved changedAt past the edit');
  // No version of the old image after one of the new (the old ones may be skipped: a delivery
  // shows each listing as it is when sent, and the first one failed once).
  const firstGone = states.findIndex((st) => st.startsWith('gone'));
  assert.ok(firstGone >= 0 && states.slice(firstGone).every((st) => st.startsWith('gone')), `${states}`);

  // Image events: each result once, in the order they happened.
  const checks = applied('listing.images_checked', id).flatMap((e) => e.images);
  assert.deepEqual(
    checks.map((i: any) => `${i.url === good ? 'good' : 'gone'}:${i.to}`),
    ['good:ok', 'gone:unreachable'],
    JSON.stringify(checks),
  );
  for (const i of checks) assert.ok(i.from === 'pending' || i.from === null, JSON.stringify(i));
  const notFound = applied('listing.images_checked', id)
    .flatMap((e) => e.images)
    .find((i: any) => i.to === 'unreachable');
  assert.equal(notFound.problem.code, 'not_found');

  // Readiness events: live (the check), pending again (the write of the new URL: a partner's own
  // write records its event too), then no working image (the check). One chain: each event's
  // `from` is the `to` of the one before.
  const readiness = applied('listing.readiness_changed', id);
  assert.deepEqual(
    readiness.map((e) => (e.to.live ? 'live' : e.to.reasons.map((r: any) => r.code).join('+'))),
    ['live', 'images_pending', 'no_working_image'],
    JSON.stringify(readiness),
  );
  assert.deepEqual(
    readiness[0]!.from.reasons.map((r: any) => r.code),
    ['images_pending'],
  );
  for (let i = 1; i < readiness.length; i++) assert.deepEqual(readiness[i]!.from, readiness[i - 1]!.to);

  // Every event, whatever its type, in occurredAt order within its type, each id once.
  for (const type of ['listing.images_checked', 'listing.readiness_changed']) {
    const events = applied(type, id);
    const at = events.map((e) => e.occurredAt);
    assert.deepEqual(at, [...at].sort(), `${type} in order`);
    assert.equal(new Set(events.map((e) => e.id)).size, events.length, `${type}: each event once`);
    assert.ok(events.every((e) => e.externalReference === reference));
  }
});
