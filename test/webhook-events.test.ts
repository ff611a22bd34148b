import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../src/domain/events/registry.js';
import { recordEvents } from '../src/store/events.js';
import {
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { putListing } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

const SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'];

/**
 * Event types an endpoint subscribes to (docs/webhooks.md, "Event types"): the subscription as the
 * API takes and shows it, the outbox written by recordEvents, and the document's webhooks section,
 * all from the one registry (src/domain/events/registry.ts).
 */
describe('webhook events: subscribing and the outbox', () => {
  let app: TestApp;
  let tree: Tree;
  let partner: { id: string; secret: string };
  let receiver: Receiver;

  before(async () => {
    app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    tree = await createTree(app);
    partner = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await app.close();
  });

  const create = (body: Record<string, unknown>) =>
    app.call('POST', `${EXT}/webhooks`, { secret: partner.secret, body: { url: receiver.url, ...body } });

  test('an endpoint naming no events gets listings.changed, as before', async () => {
    const reply = await create({});
    assert.equal(reply.status, 201, reply.text);
    assert.deepEqual(reply.body.data.events, ['listings.changed']);
    const got = await app.call('GET', `${EXT}/webhooks/${reply.body.data.id}`, { secret: partner.secret });
    assert.deepEqual(got.body.data.events, ['listings.changed']);
  });

  test('events are taken on creation, shown, and changed by PATCH; each type once', async () => {
    const reply = await create({
      events: ['listing.readiness_changed', 'listing.images_checked', 'listing.images_checked'],
    });
    assert.equal(reply.status, 201, reply.text);
    // In the registry's order, each once.
    assert.deepEqual(reply.body.data.events, ['listing.images_checked', 'listing.readiness_changed']);
    const id = reply.body.data.id;
    const patched = await app.call('PATCH', `${EXT}/webhooks/${id}`, {
      secret: partner.secret,
      body: { events: ['listings.changed', 'listing.readiness_changed'] },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.data.events, ['listings.changed', 'listing.readiness_changed']);
    const listed = await app.call('GET', `${EXT}/webhooks`, { secret: partner.secret });
    const shown = listed.body.data.find((e: { id: string }) => e.id === id);
    assert.deepEqual(shown.events, ['listings.changed', 'listing.readiness_changed']);
    const operator = await app.admin('GET', `/webhooks/${id}`).catch(() => null);
    if (operator) assert.deepEqual(operator.events, ['listings.changed', 'listing.readiness_changed']);
  });

  test('an unknown type is refused with 422 at events, naming the allowed ones; so is none', async () => {
    for (const events of [['listing.sold'], ['listings.changed', 'ping'], []]) {
      const reply = await create({ events });
      assert.equal(reply.status, 422, `${JSON.stringify(events)}: ${reply.text}`);
      assert.equal(reply.body.error.code, 'VALIDATION_FAILED');
      const [issue] = reply.body.error.issues;
      assert.match(issue.path, /^events/);
      if (events.length > 0) {
        for (const name of EVENT_TYPE_NAMES) assert.ok(issue.message.includes(name), issue.message);
      }
    }
    const endpoint = (await create({})).body.data;
    const patch = await app.call('PATCH', `${EXT}/webhooks/${endpoint.id}`, {
      secret: partner.secret,
      body: { events: ['listing.deleted'] },
    });
    assert.equal(patch.status, 422, patch.text);
    assert.match(
      patch.body.error.issues[0].message,
      /must be one of listings\.changed, listing\.images_checked/,
    );
  });

  test('recordEvents writes in the transaction: a rollback leaves nothing, a commit keeps the order', async () => {
    const a = await putListing(app, partner.secret, 'EV-1', listingBody({ dealerProfileId: tree.ids.A }));
    const b = await putListing(app, partner.secret, 'EV-2', listingBody({ dealerProfileId: tree.ids.A1 }));
    const db = app.running.db;
    const count = async () =>
      (
        await db.query<{ n: number }>(
          'test',
          'SELECT count(*)::int AS n FROM events WHERE listing_id = ANY($1)',
          [[a, b]],
        )
      )[0]!.n;
    await assert.rejects(
      db.transaction(async (tx) => {
        await recordEvents(tx, [{ type: 'listing.images_checked', listingId: a, data: { images: [] } }]);
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    assert.equal(await count(), 0);
    const readiness = (live: boolean) => ({ from: { live: !live, reasons: [] }, to: { live, reasons: [] } });
    for (let i = 0; i < 4; i++) {
      await db.transaction((tx) =>
        recordEvents(tx, [
          { type: 'listing.readiness_changed', listingId: a, data: readiness(i % 2 === 0) },
          { type: 'listing.readiness_changed', listingId: b, data: readiness(i % 2 === 0) },
        ]),
      );
    }
    const rows = await db.query<{
      listing_id: string;
      data: { to: { live: boolean } };
      external_reference: string;
    }>(
      'test',
      'SELECT listing_id, data, external_reference FROM events WHERE listing_id = ANY($1) ORDER BY stamp, seq',
      [[a, b]],
    );
    assert.equal(rows.length, 8);
    const ofA = rows.filter((r) => r.listing_id === a);
    assert.deepEqual(
      ofA.map((r) => r.data.to.live),
      [true, false, true, false],
    );
    assert.equal(ofA[0]!.external_reference, 'EV-1');
    await assert.rejects(
      db.transaction((tx) =>
        recordEvents(tx, [
          { type: 'listing.images_checked', listingId: '00000000-0000-4000-8000-000000000000', data: {} },
        ]),
      ),
      /name no listing/,
    );
  });

  test('the OpenAPI webhooks section has every type of the registry, and the client its types', async () => {
    const document = JSON.parse(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8'));
    assert.deepEqual(Object.keys(document.webhooks), [...EVENT_TYPES.map((t) => t.name), 'ping']);
    for (const type of EVENT_TYPES) {
      const body = document.webhooks[type.name].post.requestBody.content['application/json'].schema;
      assert.equal(body.properties.type.const, type.name);
      if (!type.cursorWalk) {
        const item = body.properties.data.items;
        for (const key of [
          'id',
          'occurredAt',
          'listingId',
          'externalReference',
          ...Object.keys(type.payload!.shape),
        ])
          assert.ok(item.required.includes(key), `${type.name}: ${key}`);
      }
    }
    const served = await app.call('GET', '/docs/openapi.json');
    if (served.status === 200)
      assert.deepEqual(Object.keys(served.body.webhooks), Object.keys(document.webhooks));
    const client = readFileSync(new URL('../packages/client/src/openapi.ts', import.meta.url), 'utf8');
    for (const name of EVENT_TYPE_NAMES) assert.ok(client.includes(`"${name}"`), name);
  });
});
