import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  createClient,
  type ForecourtClient,
  ForecourtError,
  verifyWebhook,
  WebhookVerificationError,
} from '@forecourt/client';
import {
  bootApp,
  createPartner,
  createTree,
  listingBody,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { putListing } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * The typed client's webhook methods against the real service, and its verifier against real
 * deliveries (the receiver checks them with the `standardwebhooks` package as well, so the two
 * agree on what a valid signature is).
 */
let app: TestApp;
let tree: Tree;
let receiver: Receiver;
let forecourt: ForecourtClient;
let secret: string;

before(async () => {
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' });
  tree = await createTree(app);
  const partner = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
  });
  forecourt = createClient({ baseUrl: app.url, secret: partner.secret, dispatcher: app.dispatcher });
  receiver = await startReceiver();
  secret = partner.secret;
});
after(async () => {
  await receiver.close();
  await app.close();
});

test('the client manages endpoints: create (secret once), list, update, rotate, ping, log, remove', async () => {
  const created = await forecourt.webhooks.create({ url: receiver.url, filter: { status: ['active'] } });
  assert.match(created.secret, /^whsec_/);
  receiver.secrets.push(created.secret);
  const listed = await forecourt.webhooks.list();
  assert.ok(listed.some((e) => e.id === created.id && !('secret' in e)));
  const paused = await forecourt.webhooks.update(created.id, { description: 'mirror', enabled: false });
  assert.deepEqual([paused.description, paused.enabled], ['mirror', false]);
  const rotated = await forecourt.webhooks.rotateSecret(created.id);
  assert.notEqual(rotated.secret, created.secret);
  receiver.secrets.push(rotated.secret);
  const ping = await forecourt.webhooks.test(created.id);
  assert.deepEqual([ping.type, ping.status, ping.responseCode], ['ping', 'succeeded', 200]);
  const log = await forecourt.webhooks.deliveries(created.id, { pageSize: 1 });
  assert.equal(log.data[0]!.id, ping.id);
  // A sample of a type it subscribes to (the default, listings.changed); one it does not: 400.
  const sample = await forecourt.webhooks.test(created.id, { type: 'listings.changed' });
  assert.equal(sample.status, 'succeeded');
  const notSubscribed = await forecourt.webhooks
    .test(created.id, { type: 'listing.images_checked' })
    .catch((e: unknown) => e);
  assert.ok(notSubscribed instanceof ForecourtError);
  assert.deepEqual([notSubscribed.status, notSubscribed.code], [400, 'INVALID_QUERY']);
  await forecourt.webhooks.remove(created.id);
  const gone = await forecourt.webhooks.get(created.id).catch((e: unknown) => e);
  assert.ok(gone instanceof ForecourtError);
  assert.deepEqual([gone.status, gone.code], [404, 'NOT_FOUND']);
  const refused = await forecourt.webhooks.create({ url: 'ftp://example.com/x' }).catch((e: unknown) => e);
  assert.ok(refused instanceof ForecourtError);
  assert.equal(refused.code, 'VALIDATION_FAILED');
  assert.equal(refused.issues?.[0]?.path, 'url');
});

test('verifyWebhook accepts a real delivery and says why it refuses a changed one', async () => {
  const endpoint = await forecourt.webhooks.create({ url: receiver.url });
  receiver.secrets.push(endpoint.secret);
  const ref = unique('cv');
  await putListing(app, secret, ref, listingBody({ dealerProfileId: tree.ids.A1 }));
  const until = Date.now() + 20_000;
  // Its own delivery (the first test's sample is a listings.changed too).
  const delivered = () =>
    receiver.requests.find((r) => r.type === 'listings.changed' && r.raw.body.includes(ref));
  while (!delivered()) {
    assert.ok(Date.now() < until, 'no delivery within 20 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const delivery = delivered()!;
  assert.deepEqual(receiver.problems, []);
  const { body, headers } = delivery.raw;
  const payload = verifyWebhook(body, headers, endpoint.secret);
  assert.equal(payload.type, 'listings.changed');
  assert.equal(payload.data[0]!.externalReference, ref);
  assert.equal(typeof payload.cursor, 'string');
  // A Headers object and a Buffer body work too; any one of several secrets is enough.
  verifyWebhook(Buffer.from(body), new Headers(headers), [
    'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    endpoint.secret,
  ]);

  const refusals: [string, () => unknown, RegExp][] = [
    [
      'a changed body',
      () => verifyWebhook(body.replace(ref, `${ref}x`), headers, endpoint.secret),
      /No signature matches/,
    ],
    [
      'another secret',
      () => verifyWebhook(body, headers, 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
      /No signature matches/,
    ],
    ['no whsec_ prefix', () => verifyWebhook(body, headers, endpoint.secret.slice(6)), /starts with whsec_/],
    [
      'no id',
      () => verifyWebhook(body, { ...headers, 'webhook-id': undefined }, endpoint.secret),
      /webhook-id header is missing/,
    ],
    [
      'an old timestamp',
      () => verifyWebhook(body, headers, endpoint.secret, { now: new Date(Date.now() + 10 * 60_000) }),
      /outside the 300 s tolerance/,
    ],
  ];
  for (const [what, verify, message] of refusals) {
    assert.throws(
      verify,
      (e: unknown) => e instanceof WebhookVerificationError && message.test(e.message),
      what,
    );
  }
});
