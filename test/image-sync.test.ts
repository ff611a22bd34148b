import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Loop } from '../src/background/loop.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { getListing, putListing } from './helpers/listings-api.js';
import { startReceiver } from './helpers/webhook-receiver.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * A check is not the partner's edit (docs/sync.md, docs/images.md): a check result that lands
 * after a partner's sync reaches the partner's next cursor page, once, in order, with changedAt
 * moved and updatedAt as the partner left it. Runs on PGlite, and on PostgreSQL when DATABASE_URL
 * is set.
 */

let app: TestApp;
let images: ImageServer;
let secret: string;
let hooks: string;
let checker: Loop;

before(async () => {
  images = await startImageServer();
  app = await bootApp({
    ...IMAGE_TEST_ENV,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const tree = await createTree(app);
  secret = (await writer(app, [tree.ids.A!])).secret;
  hooks = (
    await createPartner(app, {
      roots: [tree.ids.A!],
      scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
    })
  ).secret;
  checker = imageChecker(app);
});
after(async () => {
  await checker.stop();
  await app.close();
  await images.close();
});

interface Page {
  items: { id: string; updatedAt: string; changedAt: string; images: { check: { state: string } }[] }[];
  cursor: string;
}

/** Every page from `cursor` to hasMore: false, each listing in the order received. */
async function walk(cursor: string | undefined): Promise<Page> {
  const items: Page['items'] = [];
  let next = cursor;
  for (;;) {
    const reply = await app.call(
      'GET',
      `${EXT}/listings?status=all&pageSize=2${next ? `&cursor=${encodeURIComponent(next)}` : ''}`,
      { secret },
    );
    assert.equal(reply.status, 200, reply.text);
    items.push(...reply.body.data);
    next = reply.body.pagination.nextCursor;
    if (!reply.body.pagination.hasMore) return { items, cursor: next! };
  }
}

test('a check result after a sync reaches the next cursor page once, in order, updatedAt unchanged', async () => {
  const plain = await putListing(app, secret, ref('plain'), listingBody({ images: [] }));
  const url = images.url('/photo.jpg?sync');
  const checked = await putListing(app, secret, ref('checked'), listingBody({ images: [url] }));
  const written = await getListing(app, secret, checked);
  assert.equal(written.changedAt, written.updatedAt, 'a partner’s write: changedAt is updatedAt');

  // A sync to the end: the copy holds the image pending.
  let first!: Page;
  await eventually(
    async () => {
      first = await walk(undefined);
      return first.items.some((l) => l.id === checked);
    },
    () => 'not synced',
  );
  const copied = first.items.find((l) => l.id === checked)!;
  assert.equal(copied.images[0]!.check.state, 'pending');

  await checker.start();
  let after = written;
  await eventually(
    async () => {
      after = await getListing(app, secret, checked);
      return after.images[0].check.state === 'ok';
    },
    () => JSON.stringify(after.images),
  );
  assert.equal(after.updatedAt, written.updatedAt, 'a check is not the partner’s edit');
  assert.ok(after.changedAt > written.changedAt, `${after.changedAt} after ${written.changedAt}`);

  // The next sync from where the last ended. While the change is fresher than the commit horizon
  // a walk shows it and its cursor stops before it, so the walk's next page shows it again
  // (docs/sync.md): wait until a walk's cursor has passed it (the walk after it no longer holds
  // it), then the listing once, with its check, and nothing else.
  let next!: Page;
  await eventually(
    async () => {
      next = await walk(first.cursor);
      const later = await walk(next.cursor);
      return next.items.some((l) => l.id === checked) && !later.items.some((l) => l.id === checked);
    },
    () => 'the check result did not reach the walk, or its cursor never passed it',
  );
  next = await walk(first.cursor);
  assert.deepEqual(
    next.items.map((l) => l.id),
    [checked],
  );
  assert.equal(next.items[0]!.images[0]!.check.state, 'ok');
  assert.equal(next.items[0]!.updatedAt, written.updatedAt);
  assert.equal(next.items[0]!.changedAt, after.changedAt);

  // The whole walk from the start: each listing once, in changedAt order.
  const whole = await walk(undefined);
  const ids = whole.items.map((l) => l.id);
  assert.equal(new Set(ids).size, ids.length, 'no listing twice');
  assert.ok(ids.indexOf(plain) < ids.indexOf(checked));
  const positions = whole.items.map((l) => l.changedAt);
  assert.deepEqual(positions, [...positions].sort());
});

test('a check result reaches a webhook copy (listings.changed), updatedAt unchanged', async () => {
  await checker.start();
  const receiver = await startReceiver();
  try {
    const reply = await app.call('POST', `${EXT}/webhooks`, { secret: hooks, body: { url: receiver.url } });
    assert.equal(reply.status, 201, reply.text);
    receiver.secrets.push(reply.body.data.secret);
    // A slow image: the first delivery holds it pending.
    const url = images.url('/slow?ms=1500&hook');
    const id = await putListing(app, hooks, ref('hook'), listingBody({ images: [url] }));
    const written = await getListing(app, hooks, id);
    await eventually(
      () => receiver.listings.get(id)?.images[0].check.state === 'ok',
      () => JSON.stringify(receiver.listings.get(id)?.images ?? 'not delivered'),
    );
    const copy = receiver.listings.get(id)!;
    assert.equal(copy.updatedAt, written.updatedAt);
    assert.ok(copy.changedAt > written.changedAt);
    assert.ok(
      receiver.requests.filter((r) => r.type === 'listings.changed').length >= 2,
      'delivered pending, then ok',
    );
    assert.deepEqual(receiver.problems, []);
  } finally {
    await receiver.close();
  }
});
