import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Loop } from '../src/background/loop.js';
import { bootApp, createTree, listingBody, type TestApp } from './helpers/app.js';
import { baseEnv } from './helpers/base-env.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { getListing, putListing } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * `forecourt listen` forwards an image check's result as a change (docs/webhooks.md, docs/sync.md):
 * the result moves the listing's changedAt, not its updatedAt, so a listener that told versions
 * apart by updatedAt, or read a window of updatedAt, would drop it. The listing here is written
 * before listen starts (it is the present), and its check lands after.
 */
const BIN = path.resolve(import.meta.dirname, '../packages/client/dist/bin.js');
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let app: TestApp;
let images: ImageServer;
let secret: string;
let checker: Loop;
let receiver: Receiver;
let listener: ChildProcess | undefined;
let output = '';

before(async () => {
  images = await startImageServer();
  app = await bootApp(IMAGE_TEST_ENV);
  const tree = await createTree(app);
  secret = (await writer(app, [tree.ids.A!])).secret;
  checker = imageChecker(app, 4);
  receiver = await startReceiver();
  receiver.secrets.push(WEBHOOK_SECRET);
});
after(async () => {
  if (listener && listener.exitCode === null) listener.kill('SIGKILL');
  await checker.stop();
  await receiver.close();
  await app.close();
  await images.close();
});

test('listen forwards a check result on a listing written before it started, updatedAt unchanged', async () => {
  const id = await putListing(
    app,
    secret,
    ref('listen-check'),
    listingBody({ images: [images.url('/photo.jpg?l')] }),
  );
  const written = await getListing(app, secret, id);
  assert.equal(written.images[0].check.state, 'pending');

  listener = spawn(
    process.execPath,
    [
      BIN,
      'listen',
      '--forward-to',
      receiver.url,
      '--url',
      app.url,
      '--ca',
      path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
      '--webhook-secret',
      WEBHOOK_SECRET,
      '--interval-ms',
      '100',
    ],
    { env: { ...baseEnv(), FORECOURT_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  for (const stream of [listener.stdout!, listener.stderr!]) stream.on('data', (c: Buffer) => (output += c));
  await eventually(
    () => output.includes('listening'),
    () => output,
  );

  await checker.start();
  await eventually(
    () => receiver.listings.get(id)?.images[0].check.state === 'ok',
    () =>
      `not forwarded; listen said:\n${output}\nreceived: ${JSON.stringify([...receiver.listings.values()])}`,
  );
  const forwarded = receiver.listings.get(id)!;
  assert.equal(forwarded.updatedAt, written.updatedAt, 'a check is not the partner’s edit');
  assert.ok(forwarded.changedAt > written.changedAt);
  assert.deepEqual(receiver.problems, []);
  // The present (the pending version) was not forwarded: only the check result was.
  const versions = receiver.requests
    .filter((r) => r.answered === 200)
    .flatMap((r) => JSON.parse(r.raw.body).data.filter((l: { id: string }) => l.id === id));
  assert.deepEqual(
    versions.map((l: any) => l.images[0].check.state),
    ['ok'],
  );
});
