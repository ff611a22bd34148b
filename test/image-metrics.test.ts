import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bootApp, createTree, listingBody, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { getListing, putListing } from './helpers/listings-api.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * The instance's own image checker (background/loops.ts, IMAGE_CHECK_CONCURRENCY): it checks what
 * partners write, and counts each check by state in the metrics (docs/operations.md). Runs on
 * PGlite, and on PostgreSQL when DATABASE_URL is set.
 */

let app: TestApp;
let images: ImageServer;

before(async () => {
  images = await startImageServer();
  app = await bootApp({
    IMAGE_CHECK_CONCURRENCY: '4',
    IMAGE_CHECK_ALLOW_LOOPBACK: 'true',
    IMAGE_CHECK_TIMEOUT_MS: '4000',
  });
});
after(async () => {
  await app.close();
  await images.close();
});

async function metrics(): Promise<string> {
  const reply = await app.call('GET', '/api/admin/v1/metrics', {
    headers: { authorization: `Bearer ${app.running.adminToken}` },
  });
  assert.equal(reply.status, 200);
  return reply.text;
}

test('the instance checks what partners write, and counts each check by state', async () => {
  const tree = await createTree(app);
  const { secret } = await writer(app, [tree.ids.A!]);
  const id = await putListing(
    app,
    secret,
    ref('metrics'),
    listingBody({ images: [images.url('/photo.jpg?metrics'), images.url('/missing.jpg?metrics')] }),
  );
  let listing: any;
  await eventually(
    async () => {
      listing = await getListing(app, secret, id);
      return listing.images.every((i: any) => i.check.state !== 'pending');
    },
    () => JSON.stringify(listing?.images),
  );
  assert.equal(listing.readiness.live, true);
  const text = await metrics();
  assert.match(text, /forecourt_image_checks_total\{state="ok"\} 1/);
  assert.match(text, /forecourt_image_checks_total\{state="unreachable"\} 1/);
  assert.match(text, /forecourt_image_check_duration_seconds_count\{state="ok"\} 1/);
  assert.match(text, /forecourt_background_passes_total\{loop="image-checks"\} [1-9]/);
});
