import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bootApp, createPartner, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { putOk } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';
import { sleep } from './helpers/write-fixtures.js';

/**
 * WEBHOOK_ALLOW_LOOPBACK, the demo's setting (docs/contract.md#the-demo): a
 * partner can try webhooks with a receiver on its own machine (http://127.0.0.1:…), and nothing
 * else opens up: other private addresses stay refused, and plain http only reaches loopback.
 */
let app: TestApp;
let secret: string;
let receiver: Receiver;
before(async () => {
  app = await bootApp({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
  const tree = await createTree(app);
  secret = (
    await createPartner(app, {
      roots: [tree.ids.A!],
      scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
    })
  ).secret;
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await app.close();
});

test('loopback addresses are taken, over http too, and a delivery reaches them', async () => {
  const created = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url: receiver.url } });
  assert.equal(created.status, 201, created.text);
  assert.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+/);
  receiver.secrets.push(created.body.data.secret);
  await putOk(app, secret, 'LOOPBACK-1', listingBody());
  for (let i = 0; i < 100 && receiver.applied.length === 0; i++) await sleep(200);
  assert.ok(receiver.applied.length > 0, 'no delivery arrived');
  assert.deepEqual(receiver.problems, []);
  for (const url of ['http://localhost:9/hook', 'http://[::1]:9/hook', 'https://127.0.0.1:9/hook']) {
    const reply = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url } });
    assert.equal(reply.status, 201, `${url}: ${reply.text}`);
    await app.call('DELETE', `${EXT}/webhooks/${reply.body.data.id}`, { secret });
  }
});

test('other private addresses stay refused, and http only reaches loopback', async () => {
  for (const [url, message] of [
    ['https://10.1.2.3/hook', /private network address/],
    ['http://192.168.1.10/hook', /must use https|private network address/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['http://203.0.114.7/hook', /must use https/],
  ] as const) {
    const reply = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url } });
    assert.equal(reply.status, 422, `${url}: ${reply.text}`);
    assert.match(reply.body.error.issues[0].message, message, url);
  }
});
