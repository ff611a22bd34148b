import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type NewEvent, recordEvents } from '../src/store/events.js';
import {
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { putListing } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

const SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'];
const EVENTS = ['listing.images_checked', 'listing.readiness_changed'];

/**
 * Events of the outbox delivered to the endpoints subscribed to them (docs/webhooks.md, "Event
 * types", "Ordering"): signed, in order per listing, one type per delivery, within each partner's
 * scope, retried with the same webhook-id until a 2xx, and logged. Events are recorded by direct
 * recordEvents calls, as the image checker records them.
 */
describe('webhook events: delivery', () => {
  let app: TestApp;
  let tree: Tree;
  let partnerA: { id: string; secret: string };
  let partnerB: { id: string; secret: string };
  const receivers: Receiver[] = [];

  before(async () => {
    app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    tree = await createTree(app);
    partnerA = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
    partnerB = await createPartner(app, { roots: [tree.ids.B!], scopes: SCOPES });
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await app.close();
  });

  async function endpoint(partner: { secret: string }, events?: string[]) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const reply = await app.call('POST', `${EXT}/webhooks`, {
      secret: partner.secret,
      body: { url: receiver.url, ...(events ? { events } : {}) },
    });
    assert.equal(reply.status, 201, reply.text);
    receiver.secrets.push(reply.body.data.secret);
    return { receiver, id: reply.body.data.id as string };
  }

  const record = (rows: NewEvent[]) => app.running.db.transaction((tx) => recordEvents(tx, rows));
  const checked = (listingId: string, n: number): NewEvent => ({
    type: 'listing.images_checked',
    listingId,
    data: { images: [{ url: `https://img.example/${n}.jpg`, from: 'pending', to: 'ok', problem: null }] },
  });
  const readiness = (listingId: string, live: boolean): NewEvent => ({
    type: 'listing.readiness_changed',
    listingId,
    data: { from: { live: !live, reasons: [] }, to: { live, reasons: [] } },
  });

  /** Every event a receiver applied (2xx, verified, each delivery once), in order. */
  function applied(receiver: Receiver) {
    const seen = new Set<string>();
    const out: { type: string; id: string; listingId: string; [k: string]: any }[] = [];
    for (const r of receiver.requests) {
      if (r.answered !== 200 || seen.has(r.id) || r.type === 'listings.changed' || r.type === 'ping')
        continue;
      seen.add(r.id);
      const body = JSON.parse(r.raw.body);
      for (const e of body.data) out.push({ type: body.type, ...e });
    }
    return out;
  }

  test('each subscribed endpoint gets its events in order, one type a delivery, signed, in scope', async () => {
    const events = await endpoint(partnerA, EVENTS);
    const plain = await endpoint(partnerA);
    const other = await endpoint(partnerB, ['listing.readiness_changed']);
    const a = await putListing(app, partnerA.secret, 'EVD-A', listingBody({ dealerProfileId: tree.ids.A }));
    const b = await putListing(app, partnerA.secret, 'EVD-B', listingBody({ dealerProfileId: tree.ids.A1a }));
    const c = await putListing(app, partnerB.secret, 'EVD-C', listingBody({ dealerProfileId: tree.ids.B1 }));
    const expected: NewEvent[] = [];
    for (let i = 0; i < 30; i++) {
      const rows = [checked(a, i), readiness(a, i % 2 === 0), checked(b, i), readiness(c, i % 2 === 0)];
      // Some transactions with one event, some with several.
      if (i % 3 === 0) await record(rows);
      else for (const row of rows) await record([row]);
      expected.push(...rows);
    }
    const mine = expected.filter((e) => e.listingId !== c);
    await eventually(
      () => applied(events.receiver).length >= mine.length,
      () => `${applied(events.receiver).length} of ${mine.length} events`,
    );
    const got = applied(events.receiver);
    assert.equal(got.length, mine.length);
    assert.deepEqual(events.receiver.problems, []);
    // The same order as recorded, per listing and overall.
    assert.deepEqual(
      got.map((e) => [
        e.type,
        e.listingId,
        e.type === 'listing.images_checked' ? e.images[0].url : e.to.live,
      ]),
      mine.map((e: any) => [
        e.type,
        e.listingId,
        e.type === 'listing.images_checked' ? e.data.images[0].url : e.data.to.live,
      ]),
    );
    for (const e of got) {
      assert.match(e.id, /^evt_[0-9a-f-]{36}$/);
      assert.ok(!Number.isNaN(Date.parse(e.occurredAt)), e.occurredAt);
      assert.equal(e.externalReference, e.listingId === a ? 'EVD-A' : 'EVD-B');
    }
    // Verified with the standardwebhooks package, like a partner's receiver would.
    const first = events.receiver.requests.find((r) => r.type !== 'listings.changed')!;
    new Webhook(events.receiver.secrets[0]!).verify(first.raw.body, first.raw.headers);
    // Partner B sees only its listing, only the type it asked for.
    await eventually(
      () => applied(other.receiver).length >= 30,
      () => `${applied(other.receiver).length} of 30 events for B`,
    );
    assert.ok(
      applied(other.receiver).every((e) => e.listingId === c && e.type === 'listing.readiness_changed'),
    );
    // The endpoint of listings.changed only gets no events, and the events-only one no listings.
    assert.ok(plain.receiver.requests.every((r) => r.type === 'listings.changed'));
    await eventually(
      () => plain.receiver.requests.length > 0,
      () => 'the listings.changed endpoint still got nothing',
    );
    assert.ok(events.receiver.requests.every((r) => r.type !== 'listings.changed'));
    // The delivery log names each delivery's type.
    // Eventually: an attempt is logged after its answer, so the last one may not be yet.
    let types: string[] = [];
    await eventually(
      async () => {
        const log = await app.call('GET', `${EXT}/webhooks/${events.id}/deliveries?pageSize=200`, {
          secret: partnerA.secret,
        });
        assert.equal(log.status, 200, log.text);
        types = [...new Set(log.body.data.map((d: { type: string }) => d.type))].sort() as string[];
        return types.length >= EVENTS.length;
      },
      () => `types logged: ${types.join(', ')}`,
    );
    assert.deepEqual(types, EVENTS);
  });

  test('a failed delivery is retried with the same webhook-id and events; nothing passes it', async () => {
    const { receiver, id } = await endpoint(partnerA, ['listing.images_checked']);
    receiver.script.push(500);
    const a = await putListing(app, partnerA.secret, 'EVD-R', listingBody({ dealerProfileId: tree.ids.A2 }));
    await record([checked(a, 1)]);
    await eventually(
      () => receiver.requests.length >= 1,
      () => 'no attempt',
    );
    await record([checked(a, 2)]);
    await eventually(
      () => applied(receiver).length >= 2,
      () => `${receiver.requests.map((r) => `${r.id}:${r.answered}`).join(' ')}`,
      15_000,
    );
    const [failedTry, retry] = receiver.requests;
    assert.equal(failedTry!.answered, 500);
    assert.equal(retry!.id, failedTry!.id);
    assert.equal(retry!.raw.body, failedTry!.raw.body);
    assert.deepEqual(
      applied(receiver).map((e) => e.images[0].url),
      ['https://img.example/1.jpg', 'https://img.example/2.jpg'],
    );
    // The retry is logged after its answer: wait for both attempts in the log.
    let attempts: Array<{ attempt: number; status: string; type: string; nextAttemptAt: string | null }> = [];
    await eventually(
      async () => {
        const log = await app.call('GET', `${EXT}/webhooks/${id}/deliveries`, { secret: partnerA.secret });
        attempts = log.body.data.filter((d: { webhookId: string }) => d.webhookId === failedTry!.id);
        return attempts.length >= 2;
      },
      () => `${attempts.length} attempts logged`,
    );
    assert.deepEqual(
      attempts.map((d: { attempt: number; status: string; type: string }) => [d.attempt, d.status, d.type]),
      [
        [2, 'succeeded', 'listing.images_checked'],
        [1, 'failed', 'listing.images_checked'],
      ],
    );
    assert.ok(attempts[1]!.nextAttemptAt);
  });

  test('an operator sends the events of a failing endpoint now, not after their back-off', async () => {
    // Until 2026-11-30 the operator's retry looked at the walk of listings only: an endpoint
    // failing on its events answered 409 "nothing to retry" and waited out its back-off.
    const { receiver, id } = await endpoint(partnerA, ['listing.images_checked']);
    const admin = { authorization: `Bearer ${app.running.adminToken}` };
    assert.equal(
      (await app.call('POST', `/api/admin/v1/webhooks/${id}/retry`, { headers: admin })).status,
      409,
    );
    receiver.script.push(500, 500, 500);
    const a = await putListing(app, partnerA.secret, 'EVD-OR', listingBody({ dealerProfileId: tree.ids.A2 }));
    await record([checked(a, 9)]);
    // The third attempt failed and is logged: the next waits 6 to 10 s (retry.ts).
    let logged = 0;
    await eventually(
      async () => {
        const log = await app.call('GET', `${EXT}/webhooks/${id}/deliveries`, { secret: partnerA.secret });
        logged = log.body.data.filter((d: { status: string }) => d.status === 'failed').length;
        return logged >= 3;
      },
      () => `${logged} failed attempts logged`,
      30_000,
    );
    const retried = await app.call('POST', `/api/admin/v1/webhooks/${id}/retry`, { headers: admin });
    assert.equal(retried.status, 200, retried.text);
    const at = Date.now();
    await eventually(
      () => applied(receiver).length >= 1,
      () => `${receiver.requests.length} attempts`,
      20_000,
    );
    assert.ok(Date.now() - at < 5_000, `sent ${Date.now() - at} ms after the retry, not at once`);
    assert.equal(receiver.requests.length, 4);
  });

  test('events recorded before an endpoint subscribes are not sent to it', async () => {
    const a = await putListing(app, partnerA.secret, 'EVD-S', listingBody({ dealerProfileId: tree.ids.A }));
    const { receiver, id } = await endpoint(partnerA);
    await record([checked(a, 100)]);
    await new Promise((r) => setTimeout(r, 300));
    const patched = await app.call('PATCH', `${EXT}/webhooks/${id}`, {
      secret: partnerA.secret,
      body: { events: ['listings.changed', 'listing.images_checked'] },
    });
    assert.equal(patched.status, 200, patched.text);
    await record([checked(a, 101)]);
    await eventually(
      () => applied(receiver).length >= 1,
      () => 'no event',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      applied(receiver).map((e) => e.images[0].url),
      ['https://img.example/101.jpg'],
    );
  });
});
