import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { imageListingsSettled } from '../src/domain/images/results.js';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { getListing, putListing, setStatusOk } from './helpers/listings-api.js';
import { ref } from './helpers/write-fixtures.js';

/**
 * The checker's second look at an image's listings (domain/images/checker.ts, "settle"): a write
 * that rendered an image from an older result while the new one committed leaves the listing's
 * text, and its readiness, behind; the second look sets it right. Where that changes readiness it
 * records `listing.readiness_changed`, so the listing's events stay one chain (docs/webhooks.md).
 * The race is set up by hand: the result is written to image_checks without the listing's rewrite
 * (what the result's own transaction could not see), then the second look runs.
 */
let app: TestApp;
let secret: string;

before(async () => {
  // No checker of its own: the test decides when a result lands.
  app = await bootApp({ IMAGE_CHECK_CONCURRENCY: '0' });
  const tree = await createTree(app);
  secret = (await createPartner(app, { roots: [tree.ids.A!], scopes: ['read:listings', 'write:listings'] }))
    .secret;
});
after(async () => {
  await app.close();
});

const said = (r: { live: boolean; reasons: { code: string }[] }) =>
  r.live ? 'live' : r.reasons.map((x) => x.code).join('+');

async function readinessEvents(listingId: string): Promise<any[]> {
  const reply = await app.call('GET', `${EXT}/events?types=listing.readiness_changed`, { secret });
  assert.equal(reply.status, 200, reply.text);
  return reply.body.data.filter((e: any) => e.listingId === listingId);
}

test('a listing set right by the second look records its readiness change, in the chain', async () => {
  const reference = ref('settle');
  const url = 'https://images.example.test/settle.jpg';
  const id = await putListing(app, secret, reference, listingBody({ images: [url] }));
  // Two writes of the partner's: not active, then active again (images pending all along).
  await setStatusOk(app, secret, reference, 'draft');
  await setStatusOk(app, secret, reference, 'active');
  // The image's result, committed where the listing's rewrite did not see it.
  await app.running.db.query(
    'TestImageResult',
    `UPDATE image_checks SET state = 'ok', checked_at = now(), last_checked_at = now(), format = 'jpeg',
       width = 1200, height = 800, bytes = 90000, content_type = 'image/jpeg', state_changed_at = now()
     WHERE url = $1`,
    [url],
  );
  assert.equal(said((await getListing(app, secret, id)).readiness), 'images_pending', 'the text is behind');

  await app.running.db.transaction((tx) => imageListingsSettled(tx, url));
  assert.equal(said((await getListing(app, secret, id)).readiness), 'live');
  let events: any[] = [];
  await eventually(
    async () => {
      events = await readinessEvents(id);
      return events.length >= 3;
    },
    () => JSON.stringify(events.map((e) => [e.from, e.to])),
  );
  assert.deepEqual(
    events.map((e) => `${said(e.from)} → ${said(e.to)}`),
    [
      'images_pending → not_active+images_pending',
      'not_active+images_pending → images_pending',
      'images_pending → live',
    ],
  );
  for (let i = 1; i < events.length; i++) assert.deepEqual(events[i].from, events[i - 1].to);

  // A second look that finds nothing behind rewrites nothing and records nothing.
  await app.running.db.transaction((tx) => imageListingsSettled(tx, url));
  await setStatusOk(app, secret, reference, 'draft');
  await eventually(
    async () => (await readinessEvents(id)).length >= 4,
    () => 'no event for the last status change',
  );
  const all = await readinessEvents(id);
  assert.equal(all.length, 4);
  assert.equal(`${said(all[3].from)} → ${said(all[3].to)}`, 'live → not_active');
});
