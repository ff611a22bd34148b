import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runAdminCommand } from '../src/cli/admin-commands.js';
import { EVENT_TYPE_NAMES, eventSchema, eventType } from '../src/domain/events/registry.js';
import { bootApp, createPartner, createTree, EXT, type TestApp } from './helpers/app.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * The test ping by event type (docs/webhooks.md, "Testing a receiver"): POST /webhooks/{id}/test
 * with `type` sends a signed sample delivery of a type the endpoint subscribes to, shaped as the
 * registry says; a type it does not receive, or none there is, is a 400 naming the valid ones. The
 * partner API, the admin API and `forecourt webhooks test --type` alike.
 */
let app: TestApp;
let partner: { id: string; secret: string };
let receiver: Receiver;
let all: string;
let some: string;

before(async () => {
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const tree = await createTree(app);
  partner = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'manage:webhooks'],
  });
  receiver = await startReceiver();
  const create = async (events: string[]) => {
    const reply = await app.call('POST', `${EXT}/webhooks`, {
      secret: partner.secret,
      body: { url: receiver.url, events },
    });
    assert.equal(reply.status, 201, reply.text);
    receiver.secrets.push(reply.body.data.secret);
    return reply.body.data.id as string;
  };
  all = await create([...EVENT_TYPE_NAMES]);
  some = await create(['listing.readiness_changed']);
});
after(async () => {
  await receiver.close();
  await app.close();
});

const ping = (id: string, query = '') =>
  app.call('POST', `${EXT}/webhooks/${id}/test${query}`, { secret: partner.secret });

/** The body of the last request the receiver got, verified with the standardwebhooks package. */
function lastBody(): { type: string; data: Record<string, any>[]; cursor?: string } {
  const last = receiver.requests.at(-1)!;
  const verified = receiver.secrets.some((s) => {
    try {
      new Webhook(s).verify(last.raw.body, last.raw.headers);
      return true;
    } catch {
      return false;
    }
  });
  assert.ok(verified, 'signed');
  return JSON.parse(last.raw.body);
}

test('each subscribed type: a signed sample of that type, shaped as its deliveries', async () => {
  for (const type of EVENT_TYPE_NAMES) {
    const reply = await ping(all, `?type=${type}`);
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.data.status, 'succeeded');
    assert.equal(reply.body.data.type, 'ping', 'the log says it was a test');
    const body = lastBody();
    assert.equal(body.type, type);
    assert.equal(body.data.length, 1);
    const [item] = body.data;
    if (type === 'listings.changed') {
      assert.equal(typeof body.cursor, 'string');
      assert.ok(item!.id && item!.externalReference && Array.isArray(item!.images), JSON.stringify(item));
      assert.ok(item!.images[0].check, 'the sample listing shows image checks');
    } else {
      eventSchema(eventType(type)!).parse(item);
      assert.match(item!.id, /^evt_test_/);
    }
  }
  // Without a type: the ping of old.
  const plain = await ping(all);
  assert.equal(plain.status, 200, plain.text);
  assert.deepEqual(lastBody().data, []);
  assert.equal(lastBody().type, 'ping');
  assert.deepEqual(receiver.problems, []);
});

test('a type the endpoint does not receive, or none there is: 400 naming the valid types', async () => {
  const before = receiver.requests.length;
  const unsubscribed = await ping(some, '?type=listing.images_checked');
  assert.equal(unsubscribed.status, 400, unsubscribed.text);
  assert.equal(unsubscribed.body.error.code, 'INVALID_QUERY');
  assert.match(unsubscribed.body.error.message, /does not receive "listing\.images_checked"/);
  assert.match(unsubscribed.body.error.message, /listing\.readiness_changed/);

  const unknown = await ping(all, '?type=listing.sold');
  assert.equal(unknown.status, 400, unknown.text);
  assert.equal(unknown.body.error.code, 'INVALID_QUERY');
  assert.match(unknown.body.error.message, new RegExp(EVENT_TYPE_NAMES.join(', ').replaceAll('.', '\\.')));
  assert.equal(receiver.requests.length, before, 'nothing was sent');
});

test('the operator: admin API and forecourt webhooks test --type', async () => {
  const attempt = await app.admin('POST', `/webhooks/${all}/test?type=listing.images_checked`);
  assert.equal(attempt.status, 'succeeded');
  assert.equal(lastBody().type, 'listing.images_checked');

  let out = '';
  let err = '';
  const io = {
    out: (t: string) => {
      out += t;
    },
    err: (t: string) => {
      err += t;
    },
  };
  const run = (...args: string[]) =>
    runAdminCommand('webhooks', [...args, '--url', app.url], { DATA_DIR: app.dataDir }, io);
  assert.equal(await run('test', all, '--type', 'listing.readiness_changed'), 0, err);
  assert.match(out, /status: +succeeded/);
  assert.equal(lastBody().type, 'listing.readiness_changed');
  out = '';
  assert.equal(await run('test', some, '--type', 'listings.changed'), 1, out);
  assert.match(err, /INVALID_QUERY/);
  assert.match(err, /does not receive "listings\.changed"/);
});
