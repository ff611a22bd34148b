import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bootApp, createPartner, EXT, listingBody, type Reply, type TestApp, unique } from './helpers/app.js';
import { assertError } from './helpers/read-fixtures.js';
import { startReceiver } from './helpers/webhook-receiver.js';

/**
 * Every operation of the partner API in both modes (docs/test-mode.md): the same calls made once
 * with a partner's live secret and once with its test secret, each answered alike (the same
 * status, `Forecourt-Mode: test` on every test answer and on no live one), and nothing crossing
 * between them: no id one mode made appears in any answer of the other, an id of the other mode
 * is 404, and what the live calls left is unchanged by everything done in test, the wipe included.
 * The operations come from docs/openapi.json, so an operation added to the API fails this file
 * until it has a step here.
 */
const document = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../docs/openapi.json'), 'utf8'));
const OPERATIONS: string[] = Object.values(
  document.paths as Record<string, Record<string, { operationId?: string }>>,
)
  .flatMap((item) => Object.values(item).map((op) => op.operationId))
  .filter((id): id is string => typeof id === 'string');

const SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'];

type Mode = 'live' | 'test';
/** What one mode's calls made, and every answer they got. */
interface Made {
  listingId: string;
  webhookId: string;
  spareWebhookId: string;
  failedRequestId: string;
  answers: Reply[];
}
interface Step {
  operation: string;
  /** The call; `made` holds what the steps before it made in the same mode. */
  call: (made: Made) => { method: string; path: string; body?: unknown; headers?: Record<string, string> };
  status: number | Record<Mode, number>;
  /** What the answer must show, and what it made for the steps after it. */
  check?: (reply: Reply, made: Made, mode: Mode) => void;
}

const receiver = await startReceiver();

describe('every partner operation in both modes', () => {
  let app: TestApp;
  let partnerId = '';
  const secrets = { live: '', test: '' } as Record<Mode, string>;
  let locationId = '';
  let locationCode = '';
  const made: Record<Mode, Made> = {
    live: { listingId: '', webhookId: '', spareWebhookId: '', failedRequestId: '', answers: [] },
    test: { listingId: '', webhookId: '', spareWebhookId: '', failedRequestId: '', answers: [] },
  };

  // The same references and the same bodies in both modes: a reference names one listing per mode.
  const steps: Step[] = [
    { operation: 'getEnums', call: () => ({ method: 'GET', path: '/reference/enums' }), status: 200 },
    {
      operation: 'upsertListing',
      call: () => ({
        method: 'PUT',
        path: '/listings/mx-1',
        body: listingBody({ dealerLocationCode: locationCode }),
      }),
      status: 201,
      check: (reply, m) => {
        m.listingId = reply.body.data.listingId;
      },
    },
    {
      operation: 'getListing',
      call: (m) => ({ method: 'GET', path: `/listings/${m.listingId}` }),
      status: 200,
    },
    {
      operation: 'patchListing',
      call: () => ({
        method: 'PATCH',
        path: '/listings/mx-1',
        body: JSON.stringify({ price: 21_000 }),
        headers: { 'content-type': 'application/merge-patch+json' },
      }),
      status: 200,
    },
    {
      operation: 'setListingStatus',
      call: () => ({ method: 'POST', path: '/listings/mx-1/status', body: { status: 'draft' } }),
      status: 200,
    },
    {
      operation: 'bulkUpsertListings',
      call: () => ({
        method: 'POST',
        path: '/listings/bulk-upsert',
        body: {
          items: [{ externalReference: 'mx-2', ...listingBody({ dealerLocationCode: locationCode }) }],
        },
      }),
      status: 200,
    },
    { operation: 'markListingSold', call: () => ({ method: 'DELETE', path: '/listings/mx-2' }), status: 200 },
    {
      operation: 'listListings',
      call: () => ({ method: 'GET', path: '/listings?status=all' }),
      status: 200,
      check: (reply) => {
        const refs = reply.body.data.map((l: { externalReference: string }) => l.externalReference).sort();
        assert.deepEqual(refs, ['mx-1', 'mx-2'], 'each mode lists its own two listings');
      },
    },
    {
      operation: 'listLocations',
      call: () => ({ method: 'GET', path: '/locations?withCounts=true' }),
      status: 200,
      check: (reply) => {
        const location = reply.body.data.find((l: { id: string }) => l.id === locationId);
        assert.ok(location, 'the dealer is listed in both modes');
        // Its counts are the mode's listings only: one sold, the other a draft, none active.
        assert.deepEqual(location.stats, { activeListings: 0, totalListings: 2 });
      },
    },
    {
      operation: 'listLocationListings',
      call: () => ({ method: 'GET', path: `/locations/${locationId}/listings?status=all` }),
      status: 200,
      check: (reply) => assert.equal(reply.body.data.length, 2),
    },
    {
      operation: 'createWebhookEndpoint',
      call: () => ({ method: 'POST', path: '/webhooks', body: { url: `${receiver.url}/matrix` } }),
      status: 201,
      check: (reply, m) => {
        m.webhookId = reply.body.data.id;
      },
    },
    {
      // A second endpoint, the one deleteWebhookEndpoint deletes: the first stays for the checks.
      operation: 'createWebhookEndpoint',
      call: () => ({ method: 'POST', path: '/webhooks', body: { url: `${receiver.url}/spare` } }),
      status: 201,
      check: (reply, m) => {
        m.spareWebhookId = reply.body.data.id;
      },
    },
    {
      operation: 'listWebhookEndpoints',
      call: () => ({ method: 'GET', path: '/webhooks' }),
      status: 200,
      check: (reply, m) =>
        assert.deepEqual(
          reply.body.data.map((w: { id: string }) => w.id).sort(),
          [m.webhookId, m.spareWebhookId].sort(),
        ),
    },
    {
      operation: 'getWebhookEndpoint',
      call: (m) => ({ method: 'GET', path: `/webhooks/${m.webhookId}` }),
      status: 200,
    },
    {
      operation: 'updateWebhookEndpoint',
      call: (m) => ({ method: 'PATCH', path: `/webhooks/${m.webhookId}`, body: { description: 'matrix' } }),
      status: 200,
    },
    {
      operation: 'rotateWebhookSecret',
      call: (m) => ({ method: 'POST', path: `/webhooks/${m.webhookId}/rotate-secret` }),
      status: 200,
    },
    {
      operation: 'testWebhookEndpoint',
      call: (m) => ({ method: 'POST', path: `/webhooks/${m.webhookId}/test` }),
      status: 200,
    },
    {
      operation: 'resumeWebhookEndpoint',
      call: (m) => ({ method: 'POST', path: `/webhooks/${m.webhookId}/resume`, body: {} }),
      status: 200,
    },
    {
      operation: 'listWebhookDeliveries',
      call: (m) => ({ method: 'GET', path: `/webhooks/${m.webhookId}/deliveries` }),
      status: 200,
    },
    {
      operation: 'listEvents',
      call: () => ({ method: 'GET', path: '/events' }),
      status: 200,
      check: (reply) => assert.ok(reply.body.data.length > 0, 'the writes above made events in each mode'),
    },
    {
      operation: 'deleteWebhookEndpoint',
      call: (m) => ({ method: 'DELETE', path: `/webhooks/${m.spareWebhookId}` }),
      status: 204,
    },
    {
      operation: 'listRequests',
      call: () => ({ method: 'GET', path: '/requests' }),
      status: 200,
      check: (reply, m) => {
        const ids = reply.body.data.map((r: { requestId: string }) => r.requestId);
        assert.deepEqual(ids, [m.failedRequestId], 'each mode keeps only its own failed request');
      },
    },
    {
      operation: 'getRequest',
      call: (m) => ({ method: 'GET', path: `/requests/${m.failedRequestId}` }),
      status: 200,
    },
    {
      operation: 'wipeTestData',
      call: () => ({ method: 'DELETE', path: '/test-data' }),
      // A live secret never wipes: the live data is not test data.
      status: { live: 403, test: 200 },
      check: (reply, _m, mode) => {
        if (mode === 'live') assertError(reply, 403, 'TEST_MODE_ONLY');
      },
    },
  ];

  const send = (mode: Mode, request: ReturnType<Step['call']>) =>
    app.call(request.method, `${EXT}${request.path}`, {
      secret: secrets[mode],
      ...(typeof request.body === 'string' ? { raw: request.body } : { body: request.body }),
      headers: request.headers ?? {},
    });

  /** Runs the steps in one mode, each answer checked for its status and its mode. */
  async function run(mode: Mode, which: Step[]): Promise<void> {
    const m = made[mode];
    for (const step of which) {
      const reply = await send(mode, step.call(m));
      const status = typeof step.status === 'number' ? step.status : step.status[mode];
      assert.equal(reply.status, status, `${mode} ${step.operation}: ${reply.text}`);
      assert.equal(
        reply.headers['forecourt-mode'],
        mode === 'test' ? 'test' : undefined,
        `${mode} ${step.operation}: Forecourt-Mode`,
      );
      step.check?.(reply, m, mode);
      m.answers.push(reply);
    }
  }

  /** A refused request (an unknown query parameter), kept under the id the caller gave it. */
  async function refuse(mode: Mode): Promise<void> {
    made[mode].failedRequestId = unique(`matrix-${mode}`);
    const refused = await app.call('GET', `${EXT}/listings?colour=red`, {
      secret: secrets[mode],
      headers: { 'x-request-id': made[mode].failedRequestId },
    });
    assertError(refused, 400, 'INVALID_QUERY');
  }
  const WIPE = steps.filter((s) => s.operation === 'wipeTestData');
  const ALL_BUT_WIPE = steps.filter((s) => s.operation !== 'wipeTestData');

  /** What the live calls left, read with the live secret: the listings as written, the dealer's counts. */
  async function liveState() {
    const listings = await app.call('GET', `${EXT}/listings?status=all`, { secret: secrets.live });
    const location = await app.call('GET', `${EXT}/locations/${locationId}/listings?status=all`, {
      secret: secrets.live,
    });
    const events = await app.call('GET', `${EXT}/events`, { secret: secrets.live });
    const requests = await app.call('GET', `${EXT}/requests`, { secret: secrets.live });
    const webhooks = await app.call('GET', `${EXT}/webhooks`, { secret: secrets.live });
    const counts = await app.call('GET', `${EXT}/locations?withCounts=true`, { secret: secrets.live });
    return {
      listings: listings.body.data,
      location: location.body.data,
      counts: counts.body.data.find((l: { id: string }) => l.id === locationId)?.stats,
      webhooks: webhooks.body.data.map((w: { id: string; url: string }) => [w.id, w.url]),
      events: events.body.data.map((e: { id: string }) => e.id),
      requests: requests.body.data.map((r: { requestId: string }) => r.requestId),
    };
  }

  before(async () => {
    app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const dealer = await app.admin<{ id: string; locationCode: string }>('POST', '/dealers', {
      locationCode: unique('MX'),
    });
    locationId = dealer.id;
    locationCode = dealer.locationCode;
    const partner = await createPartner(app, { global: true, scopes: SCOPES });
    partnerId = partner.id;
    secrets.live = partner.secret;
    secrets.test = (await app.admin<{ secret: string }>('POST', `/partners/${partnerId}/test-secret`)).secret;
  });
  after(async () => {
    await app?.close();
    await receiver.close();
  });

  test('every operation of docs/openapi.json has a step', () => {
    assert.deepEqual(
      [...new Set(steps.map((s) => s.operation))].sort(),
      [...OPERATIONS].sort(),
      'a step for each operation, and no step for one the document lacks',
    );
  });

  test('live first, then the same in test: answered alike; nothing crosses; the wipe leaves live alone', async () => {
    await refuse('live');
    await run('live', steps);
    const live = await liveState();
    await refuse('test');
    await run('test', ALL_BUT_WIPE);
    assert.deepEqual(await liveState(), live, 'everything done in test left the live state as it was');
    // Every read step again with the live secret, now that the test data exists: their answers
    // join the live ones the check below reads.
    for (const step of steps.filter((s) => s.call(made.live).method === 'GET')) {
      const request = step.call(made.live);
      const reply = await send('live', request);
      assert.equal(reply.status, 200, `live ${step.operation} again: ${reply.text}`);
      made.live.answers.push(reply);
    }

    // No id one mode made appears in any answer of the other, and each is 404 there.
    for (const [mode, other] of [
      ['live', 'test'],
      ['test', 'live'],
    ] as const) {
      const theirs = made[other];
      const ids = [theirs.listingId, theirs.webhookId, theirs.spareWebhookId, theirs.failedRequestId];
      for (const reply of made[mode].answers)
        for (const id of ids)
          assert.ok(!reply.text.includes(id), `${mode} answered ${other}'s ${id}: ${reply.text}`);
      for (const lookup of [
        `/listings/${theirs.listingId}`,
        `/webhooks/${theirs.webhookId}`,
        `/webhooks/${theirs.webhookId}/deliveries`,
        `/requests/${theirs.failedRequestId}`,
      ]) {
        const reply = await app.call('GET', `${EXT}${lookup}`, { secret: secrets[mode] });
        assertError(reply, 404, 'NOT_FOUND');
      }
    }

    // (The 404s above were the live secret's own failed requests: the state is read again.)
    const beforeWipe = await liveState();
    await run('test', WIPE);
    assert.deepEqual(await liveState(), beforeWipe, 'the wipe left the live state as it was');
    const left = await app.call('GET', `${EXT}/listings?status=all`, { secret: secrets.test });
    assert.deepEqual(left.body.data, [], 'the wipe deleted the test listings');
  });
});
