import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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

/**
 * Webhooks in test mode (docs/test-mode.md): an endpoint registered with a test secret receives
 * its partner's test listings only, a live one live listings only; each mode lists and reads only
 * its own endpoints.
 */
const SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'];

describe('webhooks in test mode', () => {
  let app: TestApp;
  let tree: Tree;
  const p = { id: '', live: '', test: '' };
  let otherTest = '';
  let liveSink: Receiver;
  let testSink: Receiver;

  before(async () => {
    app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' });
    tree = await createTree(app);
    const created = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
    p.id = created.id;
    p.live = created.secret;
    p.test = (await app.admin<{ secret: string }>('POST', `/partners/${p.id}/test-secret`)).secret;
    const other = await createPartner(app, { global: true, scopes: SCOPES });
    otherTest = (await app.admin<{ secret: string }>('POST', `/partners/${other.id}/test-secret`)).secret;
    liveSink = await startReceiver();
    testSink = await startReceiver();
  });
  after(async () => {
    await liveSink?.close();
    await testSink?.close();
    await app?.close();
  });

  const create = async (secret: string, sink: Receiver) => {
    const reply = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url: sink.url } });
    assert.equal(reply.status, 201, reply.text);
    sink.secrets.push(reply.body.data.secret);
    return reply.body.data.id as string;
  };
  const listed = async (secret: string) => {
    const reply = await app.call('GET', `${EXT}/webhooks`, { secret });
    assert.equal(reply.status, 200, reply.text);
    return reply.body.data.map((e: { id: string }) => e.id);
  };

  test('each mode lists, reads and receives only its own', async () => {
    const liveId = await create(p.live, liveSink);
    const testId = await create(p.test, testSink);
    assert.deepEqual(await listed(p.live), [liveId]);
    assert.deepEqual(await listed(p.test), [testId]);
    // The operator lists both, and sees which is which.
    const all = await app.admin<{ id: string; test: boolean }[]>('GET', `/webhooks?partnerId=${p.id}`);
    assert.deepEqual(
      all.map((e) => [e.id, e.test]).sort(),
      [
        [liveId, false],
        [testId, true],
      ].sort(),
    );
    for (const [secret, id] of [
      [p.test, liveId],
      [p.live, testId],
    ] as const) {
      const reply = await app.call('GET', `${EXT}/webhooks/${id}`, { secret });
      assert.equal(reply.status, 404, reply.text);
      const deleted = await app.call('DELETE', `${EXT}/webhooks/${id}`, { secret });
      assert.equal(deleted.status, 404, deleted.text);
    }
    const liveIds = [
      await putListing(app, p.live, 'same-ref', listingBody({ dealerProfileId: tree.ids.A1 })),
      await putListing(app, p.live, 'live-2', listingBody({ dealerProfileId: tree.ids.A2 })),
    ];
    const testIds = [
      await putListing(app, p.test, 'same-ref', listingBody({ dealerProfileId: tree.ids.A1 })),
      await putListing(app, p.test, 'test-2', listingBody({ dealerProfileId: tree.ids.A2 })),
    ];
    // Another partner's test listing, in P's scope: P's test endpoint must not receive it.
    const foreign = await putListing(
      app,
      otherTest,
      'foreign',
      listingBody({ dealerProfileId: tree.ids.A1 }),
    );
    const state = () =>
      `live got ${JSON.stringify([...liveSink.listings.keys()])}, test got ${JSON.stringify([...testSink.listings.keys()])}`;
    await eventually(
      () =>
        liveIds.every((id) => liveSink.listings.has(id)) && testIds.every((id) => testSink.listings.has(id)),
      state,
    );
    // A last write in each mode, delivered after everything above: nothing else came before it.
    const lastLive = await putListing(
      app,
      p.live,
      'live-last',
      listingBody({ dealerProfileId: tree.ids.A2 }),
    );
    const lastTest = await putListing(
      app,
      p.test,
      'test-last',
      listingBody({ dealerProfileId: tree.ids.A2 }),
    );
    await eventually(() => liveSink.listings.has(lastLive) && testSink.listings.has(lastTest), state);
    assert.deepEqual([...liveSink.listings.keys()].sort(), [...liveIds, lastLive].sort());
    assert.deepEqual([...testSink.listings.keys()].sort(), [...testIds, lastTest].sort());
    assert.ok(!testSink.listings.has(foreign));
    assert.deepEqual(liveSink.problems, []);
    assert.deepEqual(testSink.problems, []);
  });

  test('events: a test endpoint gets its partner’s test events, a live one live events, GET /events by mode', async () => {
    const events = ['listing.readiness_changed'];
    const liveHook = await startReceiver();
    const testHook = await startReceiver();
    try {
      for (const [secret, sink] of [
        [p.live, liveHook],
        [p.test, testHook],
      ] as const) {
        const reply = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url: sink.url, events } });
        assert.equal(reply.status, 201, reply.text);
        sink.secrets.push(reply.body.data.secret);
      }
      const liveId = await putListing(app, p.live, 'ev-ref', listingBody({ dealerProfileId: tree.ids.A1 }));
      const testId = await putListing(app, p.test, 'ev-ref', listingBody({ dealerProfileId: tree.ids.A1 }));
      const foreign = await putListing(
        app,
        otherTest,
        'ev-foreign',
        listingBody({ dealerProfileId: tree.ids.A1 }),
      );
      const readiness = (listingId: string): NewEvent => ({
        type: 'listing.readiness_changed',
        listingId,
        data: { from: { live: false, reasons: [] }, to: { live: true, reasons: [] } },
      });
      await app.running.db.transaction((tx) =>
        recordEvents(tx, [readiness(liveId), readiness(testId), readiness(foreign)]),
      );
      const delivered = (sink: Receiver) =>
        sink.requests
          .filter((r) => r.answered === 200 && r.type === 'listing.readiness_changed')
          .flatMap((r) => JSON.parse(r.raw.body).data.map((e: { listingId: string }) => e.listingId));
      const state = () =>
        `live ${JSON.stringify(delivered(liveHook))}, test ${JSON.stringify(delivered(testHook))}`;
      await eventually(() => delivered(liveHook).length > 0 && delivered(testHook).length > 0, state);
      // One more live and test event each, delivered after the first: nothing else came before.
      await app.running.db.transaction((tx) => recordEvents(tx, [readiness(liveId), readiness(testId)]));
      await eventually(() => delivered(liveHook).length === 2 && delivered(testHook).length === 2, state);
      assert.deepEqual(delivered(liveHook), [liveId, liveId]);
      assert.deepEqual(delivered(testHook), [testId, testId]);
      const feed = async (secret: string) => {
        const reply = await app.call('GET', `${EXT}/events?types=listing.readiness_changed`, { secret });
        assert.equal(reply.status, 200, reply.text);
        return [...new Set(reply.body.data.map((e: { listingId: string }) => e.listingId))];
      };
      assert.deepEqual(await feed(p.live), [liveId]);
      assert.deepEqual(await feed(p.test), [testId]);
      // A walk's cursor belongs to its mode: the other mode's secret is refused it (found by review
      // on 2026-11-30: it was taken, and resumed the other mode's walk from this one's position).
      for (const [from, to] of [
        [p.test, p.live],
        [p.live, p.test],
      ] as const) {
        const first = await app.call('GET', `${EXT}/events?types=listing.readiness_changed&pageSize=1`, {
          secret: from,
        });
        const cursor = first.body.pagination.nextCursor;
        const same = await app.call('GET', `${EXT}/events?types=listing.readiness_changed&cursor=${cursor}`, {
          secret: from,
        });
        assert.equal(same.status, 200, same.text);
        const other = await app.call(
          'GET',
          `${EXT}/events?types=listing.readiness_changed&cursor=${cursor}`,
          {
            secret: to,
          },
        );
        assert.equal(other.status, 400, other.text);
        assert.equal(other.body.error.code, 'INVALID_QUERY');
      }
    } finally {
      await liveHook.close();
      await testHook.close();
    }
  });

  test('the overview raises nothing for test mode: neither a failing test endpoint nor a test secret’s errors', async () => {
    const failing = await startReceiver({ failRate: 1 });
    try {
      // Two partners doing the same, one with its live secret (the control), one with its test secret.
      const liveOne = await createPartner(app, { global: true, scopes: SCOPES });
      const testOne = await createPartner(app, { global: true, scopes: SCOPES });
      const testSecret = (await app.admin<{ secret: string }>('POST', `/partners/${testOne.id}/test-secret`))
        .secret;
      const endpoints: string[] = [];
      for (const secret of [liveOne.secret, testSecret]) {
        const hook = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url: failing.url } });
        assert.equal(hook.status, 201, hook.text);
        endpoints.push(hook.body.data.id);
        await putListing(app, secret, 'overview-ref', listingBody({ dealerProfileId: tree.ids.A1 }));
        // 12 of 12 requests refused: past the error share the overview raises.
        for (let i = 0; i < 12; i++) {
          const refused = await app.call('GET', `${EXT}/listings?colour=red`, { secret });
          assert.equal(refused.status, 400, refused.text);
        }
      }
      for (const id of endpoints) {
        await eventually(
          async () =>
            Boolean(
              (await app.admin<{ failingSince: string | null }>('GET', `/webhooks/${id}`)).failingSince,
            ),
          () => `receiver saw ${failing.requests.length} requests`,
        );
      }
      type Overview = {
        attention: { items: { kind: string; partner: { id: string } | null }[] };
        webhooks: { failing: number };
      };
      const raised = (overview: Overview, partnerId: string) =>
        overview.attention.items
          .filter((i) => i.partner?.id === partnerId)
          .map((i) => i.kind)
          .sort();
      // The live partner's errors are raised once its requests are counted (the recorder writes
      // them in batches); the test partner's, sent before, are counted by then too.
      let overview: Overview | undefined;
      await eventually(
        async () => {
          overview = await app.admin<Overview>('GET', '/overview');
          return raised(overview, liveOne.id).includes('error_rate');
        },
        () => JSON.stringify(overview?.attention.items),
      );
      assert.deepEqual(raised(overview!, liveOne.id), ['error_rate', 'webhook_failing']);
      assert.deepEqual(raised(overview!, testOne.id), []);
      // The endpoints' summary counts live endpoints only.
      const all = await app.admin<{ test: boolean; enabled: boolean; failingSince: string | null }[]>(
        'GET',
        '/webhooks',
      );
      const liveFailing = all.filter((e) => !e.test && e.enabled && e.failingSince).length;
      assert.ok(
        all.some((e) => e.test && e.failingSince),
        'a failing test endpoint exists',
      );
      assert.equal(overview!.webhooks.failing, liveFailing);
    } finally {
      await failing.close();
    }
  });

  test('the operator sees what a partner tried in test: written, read, synced, events, webhooks received', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
    const testSecret = (await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`))
      .secret;
    type Sign = { count: number; firstAt: string; lastAt: string } | null;
    type TestUse = {
      testListings: number;
      written: Sign;
      read: Sign;
      synced: Sign;
      events: Sign;
      webhooksReceived: Sign;
    };
    const tried = () => app.admin<TestUse>('GET', `/partners/${partner.id}/test-use`);
    const none = { written: null, read: null, synced: null, events: null, webhooksReceived: null };
    assert.deepEqual(await tried(), { testListings: 0, ...none });

    // Live use, and refused test requests, show nothing tried in test.
    await putListing(app, partner.secret, 'tried-live', listingBody({ dealerProfileId: tree.ids.A1 }));
    const livePage = await app.call('GET', `${EXT}/listings?pageSize=1&status=all`, {
      secret: partner.secret,
    });
    assert.equal(livePage.status, 200, livePage.text);
    const liveCursor = encodeURIComponent(livePage.body.pagination.nextCursor);
    assert.equal(
      (await app.call('GET', `${EXT}/listings?status=all&cursor=${liveCursor}`, { secret: partner.secret }))
        .status,
      200,
    );
    const refused = await app.call('PUT', `${EXT}/listings/tried-bad`, {
      secret: testSecret,
      body: listingBody({ dealerProfileId: tree.ids.A1, year: 1800 }),
    });
    assert.equal(refused.status, 422, refused.text);
    assert.equal((await app.call('GET', `${EXT}/listings?colour=red`, { secret: testSecret })).status, 400);
    assert.deepEqual(await tried(), { testListings: 0, ...none });

    // Each activity in test mode, once or more.
    const started = Date.now();
    await putListing(app, testSecret, 'tried-1', listingBody({ dealerProfileId: tree.ids.A1 }));
    await putListing(app, testSecret, 'tried-2', listingBody({ dealerProfileId: tree.ids.A2 }));
    const first = await app.call('GET', `${EXT}/listings?pageSize=1`, { secret: testSecret });
    assert.equal(first.status, 200, first.text);
    const cursor = encodeURIComponent(first.body.pagination.nextCursor);
    const next = await app.call('GET', `${EXT}/listings?pageSize=1&cursor=${cursor}`, { secret: testSecret });
    assert.equal(next.status, 200, next.text);
    assert.equal((await app.call('GET', `${EXT}/events`, { secret: testSecret })).status, 200);
    let use = await tried();
    assert.equal(use.testListings, 2);
    assert.equal(use.written?.count, 2);
    assert.equal(use.read?.count, 1);
    assert.equal(use.synced?.count, 1);
    assert.equal(use.events?.count, 1);
    assert.equal(use.webhooksReceived, null);
    for (const sign of [use.written, use.read, use.synced, use.events]) {
      assert.ok(
        Date.parse(sign!.firstAt) >= started - 1000 && sign!.firstAt <= sign!.lastAt,
        JSON.stringify(sign),
      );
    }

    // A test endpoint's acknowledged delivery; a live endpoint's is not counted.
    const sink = await startReceiver();
    const liveSink = await startReceiver();
    try {
      for (const [secret, to] of [
        [testSecret, sink],
        [partner.secret, liveSink],
      ] as const) {
        const hook = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url: to.url } });
        assert.equal(hook.status, 201, hook.text);
        to.secrets.push(hook.body.data.secret);
      }
      await putListing(app, testSecret, 'tried-3', listingBody({ dealerProfileId: tree.ids.A1 }));
      await putListing(app, partner.secret, 'tried-live-2', listingBody({ dealerProfileId: tree.ids.A1 }));
      const acknowledged = (r: Receiver) => r.requests.filter((x) => x.answered === 200).length;
      await eventually(
        async () =>
          acknowledged(sink) > 0 && acknowledged(liveSink) > 0 && (await tried()).webhooksReceived !== null,
        () => `test sink ${acknowledged(sink)}, live sink ${acknowledged(liveSink)}`,
      );
      use = await tried();
      assert.ok(use.webhooksReceived!.count >= 1);
      assert.ok(use.webhooksReceived!.count <= acknowledged(sink), `${use.webhooksReceived!.count}`);
    } finally {
      await sink.close();
      await liveSink.close();
    }

    // A wipe empties the test listings; what was tried stays shown.
    assert.equal((await app.call('DELETE', `${EXT}/test-data`, { secret: testSecret })).status, 200);
    const wiped = await tried();
    assert.equal(wiped.testListings, 0);
    assert.equal(wiped.written?.count, 3);
    assert.deepEqual(wiped.synced, use.synced);

    // An unknown partner is 404, a malformed id 400.
    const unknown = await app.call(
      'GET',
      '/api/admin/v1/partners/00000000-0000-4000-8000-000000000001/test-use',
      {
        headers: { authorization: `Bearer ${app.running.adminToken}` },
      },
    );
    assert.equal(unknown.status, 404, unknown.text);
    assert.match(unknown.body.error.message, /No partner/);
    const malformed = await app.call('GET', '/api/admin/v1/partners/nope/test-use', {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(malformed.status, 400, malformed.text);
  });
});
