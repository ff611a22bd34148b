import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { requestRecordsLoop } from '../src/background/request-records.js';
import { requestRecorder } from '../src/domain/request-records/recorder.js';
import { DbError } from '../src/store/errors.js';
import { requestRecordStore } from '../src/store/request-records.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { eventually } from './helpers/eventually.js';

/**
 * Request records: every failed partner request kept with its partner and key, per-minute usage,
 * read by the partner (GET /requests) and by the operator; written off the request path.
 */

const ADMIN = '/api/admin/v1';
type Partner = { id: string; secret: string };

describe('request records: what a partner sees of its own failed requests', () => {
  let app: TestApp;
  let tree: Tree;
  let acme: Partner;
  let other: Partner;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    acme = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES, name: unique('Acme') });
    other = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
  });
  after(() => app.close());

  const requests = (partner: Partner, query = '') =>
    app.call('GET', `${EXT}/requests${query}`, { secret: partner.secret });

  /** The auth.failed entry of one request: the 401 does not wait for it to be written. */
  async function authFailure(partnerId: string, requestId: string): Promise<{ details: { reason: string } }> {
    let entry: { requestId: string; details: { reason: string } } | undefined;
    await eventually(
      async () => {
        const entries = await app.admin('GET', `/audit-log?action=auth.failed&partnerId=${partnerId}`);
        entry = entries.find((e: { requestId: string }) => e.requestId === requestId);
        return entry !== undefined;
      },
      () => `no auth.failed entry for request ${requestId}`,
    );
    return entry!;
  }

  test('a refused write is there at once, with its code, issues, route and key; a success is not', async () => {
    const id = unique('sync-run');
    const refused = await app.call('PUT', `${EXT}/listings/${unique('ref')}`, {
      secret: acme.secret,
      headers: { 'x-request-id': id },
      body: listingBody({ dealerLocationCode: tree.codes.A1, fuelType: 'steam', price: 12.345 }),
    });
    assert.equal(refused.status, 422);
    const ok = await app.call('GET', `${EXT}/listings`, { secret: acme.secret });
    assert.equal(ok.status, 200);

    const page = await requests(acme);
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.meta, { failuresNotKept: 0 });
    const [newest] = page.body.data;
    assert.deepEqual(
      {
        requestId: newest.requestId,
        method: newest.method,
        route: newest.route,
        status: newest.status,
        code: newest.code,
        key: newest.key,
        issueCount: newest.issueCount,
        paths: newest.issues.map((i: { path: string }) => i.path).sort(),
      },
      {
        requestId: id,
        method: 'PUT',
        route: '/listings/{listing}',
        status: 422,
        code: 'VALIDATION_FAILED',
        key: 'current',
        issueCount: 2,
        paths: ['fuelType', 'price'],
      },
    );
    assert.equal(newest.message, refused.body.error.message);
    assert.ok(Date.parse(newest.at) <= Date.now() && newest.durationMs >= 0);
    assert.ok(
      !page.body.data.some((r: { requestId: string }) => r.requestId === ok.headers['x-request-id']),
      'a request that succeeded has no record',
    );

    const one = await app.call('GET', `${EXT}/requests/${id}`, { secret: acme.secret });
    assert.equal(one.status, 200);
    assert.equal(one.body.data.requestId, id);
    const success = await app.call('GET', `${EXT}/requests/${ok.headers['x-request-id']}`, {
      secret: acme.secret,
    });
    assert.equal(success.status, 404);
    assert.match(success.body.error.message, /Only failed requests \(4xx and 5xx\) are kept/);
  });

  test("a partner never sees another partner's records, listed or by id", async () => {
    const id = unique('theirs');
    const refused = await app.call('GET', `${EXT}/listings?colour=red`, {
      secret: other.secret,
      headers: { 'x-request-id': id },
    });
    assert.equal(refused.status, 400);
    assert.equal((await app.call('GET', `${EXT}/requests/${id}`, { secret: other.secret })).status, 200);
    assert.equal((await app.call('GET', `${EXT}/requests/${id}`, { secret: acme.secret })).status, 404);
    const mine = await requests(acme, '?pageSize=200');
    assert.ok(!mine.body.data.some((r: { requestId: string }) => r.requestId === id));
  });

  test('unmatched paths and scope refusals are kept too, each with its route', async () => {
    const reader = await createPartner(app, { roots: [tree.ids.A!], scopes: ['read:listings'] });
    await app.call('GET', `${EXT}/listngs?x=1`, { secret: reader.secret });
    await app.call('PUT', `${EXT}/listings/r1`, { secret: reader.secret, body: listingBody() });
    const page = await requests(reader);
    assert.deepEqual(
      page.body.data.map((r: { route: string; status: number; code: string }) => [r.route, r.status, r.code]),
      [
        ['/listings/{listing}', 403, 'INSUFFICIENT_SCOPE'],
        ['/listngs', 404, 'NOT_FOUND'],
      ],
    );
  });

  test('filters by status, class, code and time; pages with a cursor bound to partner and filters', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = unique(`bad-${i}`);
      ids.push(id);
      await app.call('GET', `${EXT}/listings?pageSize=-${i}`, {
        secret: partner.secret,
        headers: { 'x-request-id': id },
      });
    }
    await app.call('GET', `${EXT}/locations/${tree.ids.B}`, { secret: partner.secret });
    const only = async (query: string) =>
      (await requests(partner, query)).body.data.map((r: { status: number }) => r.status);
    assert.deepEqual(await only('?status=404'), [404]);
    assert.deepEqual(await only('?status=4xx'), [404, 400, 400, 400]);
    assert.deepEqual(await only('?status=5xx'), []);
    assert.deepEqual(await only('?code=invalid_query'), [400, 400, 400]);
    assert.deepEqual(await only(`?since=${new Date(Date.now() + 60_000).toISOString()}`), []);

    // Newest first, one at a time, to the end.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await requests(
        partner,
        `?code=INVALID_QUERY&pageSize=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.equal(page.status, 200);
      seen.push(...page.body.data.map((r: { requestId: string }) => r.requestId));
      cursor = page.body.pagination.nextCursor;
      assert.equal(page.body.pagination.hasMore, cursor !== undefined);
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());

    const first = await requests(partner, '?pageSize=1');
    const stolen = await requests(
      acme,
      `?pageSize=1&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`,
    );
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body.error.code, 'INVALID_QUERY');
    for (const [query, path] of [
      ['?status=200', 'query.status'],
      ['?status=4XXX', 'query.status'],
      ['?code=NOPE', 'query.code'],
      ['?since=yesterday', 'query.since'],
    ]) {
      const bad = await requests(partner, query);
      assert.equal(bad.status, 400, query);
      assert.deepEqual(
        bad.body.error.issues.map((i: { path: string }) => i.path),
        [path],
        query,
      );
    }
  });

  test('any read scope may read its records; a retired or previous secret is attributed to its partner', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ['write:listings'] });
    const first = partner.secret;
    // A rotation with a grace period: the first secret is "previous" until then.
    const graced = await app.admin('POST', `/partners/${partner.id}/rotate-secret`, { graceSeconds: 3600 });
    const previousId = unique('prev');
    await app.call('GET', `${EXT}/listings/not-a-uuid`, {
      secret: first,
      headers: { 'x-request-id': previousId },
    });
    // The operator sees the grace period and that the partner still used the previous secret.
    const during = await app.admin('GET', `/partners/${partner.id}`);
    assert.equal(during.lastUsedKey, 'previous');
    assert.ok(
      Date.parse(during.previousSecretValidUntil) > Date.now() + 3500_000,
      during.previousSecretValidUntil,
    );
    // A rotation without one retires both earlier secrets at once.
    const current = await app.admin('POST', `/partners/${partner.id}/rotate-secret`, {});
    const retiredId = unique('retired');
    const refused = await app.call('GET', `${EXT}/listings`, {
      secret: graced.secret,
      headers: { 'x-request-id': retiredId },
    });
    assert.equal(refused.status, 401);
    assert.match(refused.body.error.message, /not recognized/);

    const page = await app.call('GET', `${EXT}/requests`, { secret: current.secret });
    assert.equal(page.status, 200, 'write:listings alone may read its records');
    const after = await app.admin('GET', `/partners/${partner.id}`);
    assert.deepEqual([after.lastUsedKey, after.previousSecretValidUntil], ['current', null]);
    const byId = new Map(page.body.data.map((r: { requestId: string }) => [r.requestId, r]));
    assert.equal((byId.get(previousId) as { key: string }).key, 'previous');
    // GET /listings/{id} is written as the document writes it, as PUT and DELETE are.
    assert.equal((byId.get(previousId) as { route: string }).route, '/listings/{listing}');
    assert.deepEqual(
      [(byId.get(retiredId) as { key: string }).key, (byId.get(retiredId) as { status: number }).status],
      ['retired', 401],
    );

    assert.equal((await authFailure(partner.id, retiredId)).details.reason, 'retired');

    const noScope = await createPartner(app, { roots: [tree.ids.A!], scopes: ['read:locations'] });
    const refusedScope = await requests(noScope);
    assert.equal(refusedScope.status, 403);
    assert.match(refusedScope.body.error.message, /"read:listings" or "write:listings"/);
  });

  test('a disabled partner\'s requests are attributed to it (reason "disabled")', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    // A reason goes with disabling only; it is kept with the partner and in the audit log.
    const stray = await app.call('PATCH', `${ADMIN}/partners/${partner.id}`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
      body: { disabledReason: 'no toggle' },
    });
    assert.equal(stray.status, 422);
    assert.equal(stray.body.error.issues[0].path, 'disabledReason');
    const disabled = await app.admin('PATCH', `/partners/${partner.id}`, {
      disabled: true,
      disabledReason: 'Contract ended',
    });
    assert.deepEqual([disabled.disabled, disabled.disabledReason], [true, 'Contract ended']);
    const id = unique('disabled');
    const refused = await app.call('GET', `${EXT}/listings`, {
      secret: partner.secret,
      headers: { 'x-request-id': id },
    });
    assert.equal(refused.status, 401);
    const record = await app.admin('GET', `/requests/${id}`);
    assert.deepEqual([record.partner.id, record.key, record.status], [partner.id, 'current', 401]);
    assert.equal((await authFailure(partner.id, id)).details.reason, 'disabled');
    const [why] = await app.admin('GET', `/audit-log?action=partner.disabled&partnerId=${partner.id}`);
    assert.deepEqual(why.details, { reason: 'Contract ended' });
    const enabled = await app.admin('PATCH', `/partners/${partner.id}`, { disabled: false });
    assert.deepEqual([enabled.disabled, enabled.disabledReason], [false, null]);
  });
});

describe('request records: the operator view, usage and metrics', () => {
  let app: TestApp;
  let tree: Tree;
  let acme: Partner;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    acme = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES, name: unique('Acme') });
  });
  after(() => app.close());

  test("any partner's records with its name, and the requests that named no partner", async () => {
    const id = unique('op');
    await app.call('GET', `${EXT}/locations/${tree.ids.B}`, {
      secret: acme.secret,
      headers: { 'x-request-id': id },
    });
    const record = await app.admin('GET', `/requests/${id}`);
    const partner = await app.admin('GET', `/partners/${acme.id}`);
    assert.deepEqual(record.partner, { id: acme.id, name: partner.name });
    const listed = await app.admin('GET', `/requests?partnerId=${acme.id}&status=404`);
    assert.ok(listed.some((r: { requestId: string }) => r.requestId === id));

    const anonymous = unique('anon');
    await app.call('GET', `${EXT}/listings`, {
      headers: { 'x-request-id': anonymous, 'x-api-key': `fc_${'A'.repeat(46)}` },
    });
    const none = await app.admin('GET', '/requests?partnerId=none');
    const found = none.find((r: { requestId: string }) => r.requestId === anonymous);
    assert.deepEqual([found.partner, found.key, found.status], [null, null, 401]);
    const missing = await app.call('GET', `${ADMIN}/requests/${unique('nope')}`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(missing.status, 404);
  });

  test('a 5,300-character unknown path is kept to a short bound in route and message alike (issue 40)', async () => {
    const id = unique('long-path');
    const tail = `${'x'.repeat(2_000)}/${'y'.repeat(3_299)}`;
    const answer = await app.call('GET', `${EXT}/${tail}`, {
      secret: acme.secret,
      headers: { 'x-request-id': id },
    });
    assert.equal(answer.status, 404);
    assert.ok(
      answer.body.error.message.length <= 200,
      `the answer: ${answer.body.error.message.length} characters`,
    );
    const record = await app.admin('GET', `/requests/${id}`);
    assert.equal(record.code, 'NOT_FOUND');
    for (const field of ['route', 'message'] as const) {
      assert.ok(record[field].length <= 260, `${field}: ${record[field].length} characters kept`);
      assert.match(record[field], /… \(\d{4} characters\)/, `${field} says it was cut: ${record[field]}`);
      assert.doesNotMatch(record[field], /y{50}/, `${field} keeps the path beyond its bound`);
    }
  });

  test('usage per bucket: requests, errors, rate limits and bulk items written; zeros where quiet', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 5 });
    const bulk = await app.call('POST', `${EXT}/listings/bulk-upsert`, {
      secret: partner.secret,
      body: [
        { ...listingBody({ dealerLocationCode: tree.codes.A1 }), externalReference: unique('b1') },
        { ...listingBody({ dealerLocationCode: tree.codes.A1 }), externalReference: unique('b2') },
        { ...listingBody({ dealerLocationCode: tree.codes.A1, price: -1 }), externalReference: unique('b3') },
      ],
    });
    assert.equal(bulk.status, 200);
    const statuses = [bulk.status];
    for (let i = 0; i < 6; i++)
      statuses.push((await app.call('GET', `${EXT}/listings?nope=1`, { secret: partner.secret })).status);
    // 1 bulk + 4 refused queries within the limit of 5, then 2 rate-limited (unless a minute turned).
    const limited = statuses.filter((s) => s === 429).length;
    assert.ok(limited >= 1, `statuses ${statuses}`);

    const usage = await app.admin('GET', `/partners/${partner.id}/usage`);
    assert.equal(usage.buckets.length, 24);
    assert.equal(usage.bucketMinutes, 60);
    assert.deepEqual(
      {
        requests: usage.totals.requests,
        clientErrors: usage.totals.clientErrors,
        serverErrors: usage.totals.serverErrors,
        rateLimited: usage.totals.rateLimited,
        itemsWritten: usage.totals.itemsWritten,
        itemsFailed: usage.totals.itemsFailed,
      },
      {
        requests: 7,
        clientErrors: 6,
        serverErrors: 0,
        rateLimited: limited,
        itemsWritten: 2,
        itemsFailed: 1,
      },
    );
    assert.equal(usage.buckets.at(-1).requests, 7, 'the last bucket is the current hour');
    assert.deepEqual(
      usage.topErrorCodes.map((c: { code: string }) => c.code).sort(),
      limited === 6 ? ['RATE_LIMITED'] : ['INVALID_QUERY', 'RATE_LIMITED'],
    );
    const week = await app.admin('GET', `/partners/${partner.id}/usage?window=7d`);
    assert.equal(week.buckets.length, 28);
    assert.equal(week.totals.requests, 7);

    const metrics = await app.call('GET', `${ADMIN}/metrics`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.match(
      metrics.text,
      new RegExp(`forecourt_partner_requests_total\\{partner="${partner.id}",class="4xx"\\} 6`),
    );
    assert.match(
      metrics.text,
      new RegExp(
        `forecourt_rate_limit_rejections_total\\{kind="partner",partner="${partner.id}"\\} ${limited}`,
      ),
    );
    assert.match(
      metrics.text,
      new RegExp(`forecourt_partner_info\\{partner="${partner.id}",name="[^"]+"\\} 1`),
    );
    // Renamed: one info series, with the new name.
    const renamed = unique('Renamed');
    await app.admin('PATCH', `/partners/${partner.id}`, { name: renamed, rateLimitPerMinute: 1000 });
    await app.call('GET', `${EXT}/listings`, { secret: partner.secret });
    const after = await app.call('GET', `${ADMIN}/metrics`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    const series = after.text
      .split('\n')
      .filter((line) => line.startsWith(`forecourt_partner_info{partner="${partner.id}"`));
    assert.deepEqual(series, [`forecourt_partner_info{partner="${partner.id}",name="${renamed}"} 1`]);
  });

  test("test requests are counted apart: live usage by default, ?test=true the test secret's", async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const testSecret = (await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`))
      .secret;
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: partner.secret })).status, 200);
    for (let i = 0; i < 3; i++)
      assert.equal((await app.call('GET', `${EXT}/listings`, { secret: testSecret })).status, 200);
    const refused = await app.call('GET', `${EXT}/listings?nope=1`, { secret: testSecret });
    assert.equal(refused.status, 400);

    const live = await app.admin('GET', `/partners/${partner.id}/usage`);
    assert.equal(live.test, false);
    assert.deepEqual([live.totals.requests, live.totals.clientErrors], [1, 0]);
    assert.deepEqual(live.topErrorCodes, []);
    const test = await app.admin('GET', `/partners/${partner.id}/usage?test=true`);
    assert.equal(test.test, true);
    assert.deepEqual([test.totals.requests, test.totals.clientErrors], [4, 1]);
    assert.equal(test.buckets.at(-1).requests, 4, 'the current hour holds the test requests');
    assert.deepEqual(
      test.topErrorCodes.map((c: { code: string }) => c.code),
      [refused.body.error.code],
    );
    const since = await app.admin(
      'GET',
      `/partners/${partner.id}/usage?test=true&since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`,
    );
    assert.equal(since.totals.requests, 4);
  });

  test('requests per secret during a rotation grace: counted from the rotation time, in the totals and buckets', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const first = partner.secret;
    const get = (secret: string) => app.call('GET', `${EXT}/listings?pageSize=1`, { secret });
    for (let i = 0; i < 2; i++) assert.equal((await get(first)).status, 200);
    const never = await app.admin('GET', `/partners/${partner.id}`);
    assert.equal(never.secretRotatedAt, null, 'never rotated');

    const asked = Date.now();
    const graced = await app.admin('POST', `/partners/${partner.id}/rotate-secret`, { graceSeconds: 3600 });
    const rotated = await app.admin('GET', `/partners/${partner.id}`);
    const at = Date.parse(rotated.secretRotatedAt);
    assert.ok(at >= asked - 1000 && at <= Date.now() + 1000, rotated.secretRotatedAt);
    for (let i = 0; i < 3; i++)
      assert.equal((await get(first)).status, 200, 'the previous secret, in its grace');
    for (let i = 0; i < 2; i++) assert.equal((await get(graced.secret)).status, 200, 'the new secret');

    // The 24-hour window: every request, 3 of them with the previous secret.
    const day = await app.admin('GET', `/partners/${partner.id}/usage`);
    assert.deepEqual(
      [day.totals.requests, day.totals.previousKeyRequests, day.totals.retiredKeyRequests],
      [7, 3, 0],
    );
    assert.equal(day.buckets.at(-1).previousKeyRequests, 3, 'in the buckets too');

    // From the rotation: minute buckets from its minute (the requests before it in that minute are
    // counted with the current secret, the one of the time).
    const since = await app.admin(
      'GET',
      `/partners/${partner.id}/usage?since=${encodeURIComponent(rotated.secretRotatedAt)}`,
    );
    assert.equal(since.window, 'since');
    assert.equal(since.bucketMinutes, 1);
    assert.equal(since.buckets[0].start, new Date(Math.floor(at / 60_000) * 60_000).toISOString());
    assert.equal(since.totals.previousKeyRequests, 3);
    const withNew =
      since.totals.requests - since.totals.previousKeyRequests - since.totals.retiredKeyRequests;
    assert.ok(withNew >= 2 && withNew <= 4, `requests with the new secret: ${withNew}`);
    assert.equal(
      since.buckets.reduce((n: number, b: { previousKeyRequests: number }) => n + b.previousKeyRequests, 0),
      3,
    );

    // A rotation without grace retires both: the first secret is refused, counted as retired.
    await app.admin('POST', `/partners/${partner.id}/rotate-secret`, {});
    assert.equal((await get(first)).status, 401);
    const later = await app.admin('GET', `/partners/${partner.id}/usage`);
    assert.deepEqual([later.totals.previousKeyRequests, later.totals.retiredKeyRequests], [3, 1]);

    const tooOld = await app.call(
      'GET',
      `${ADMIN}/partners/${partner.id}/usage?since=${new Date(Date.now() - 8 * 86_400_000).toISOString()}`,
      { headers: { authorization: `Bearer ${app.running.adminToken}` } },
    );
    assert.equal(tooOld.status, 400);
    assert.deepEqual(
      tooOld.body.error.issues.map((i: { path: string }) => i.path),
      ['query.since'],
    );
  });

  test('records older than the retention are deleted (in batches), on both databases', async () => {
    const store = requestRecordStore(app.running.db);
    const id = unique('old');
    await store.write(
      [
        {
          at: new Date().toISOString(),
          requestId: id,
          partnerId: acme.id,
          test: false,
          key: 'current',
          method: 'GET',
          route: '/listings',
          status: 400,
          code: 'INVALID_QUERY',
          message: 'x',
          issues: [],
          issueCount: 0,
          durationMs: 1,
        },
      ],
      [],
    );
    assert.equal((await store.failures({ requestId: id }, 5, null)).length, 1);
    // A recorder whose clock is 8 days ahead: with 7 days of retention, that record is too old.
    const later = requestRecorder({
      store,
      logger: app.running.app.log as never,
      options: { retentionDays: 7, failuresPerMinute: 10, maxBuffered: 10 },
      now: () => Date.now() + 8 * 86_400_000,
    });
    await later.flush();
    assert.equal((await store.failures({ requestId: id }, 5, null)).length, 0);
  });
});

describe('request records: limits and failures of the recorder', () => {
  test('past the per-minute limit, failures are counted, not kept; with retention 0 nothing is kept', async () => {
    const app = await bootApp({ REQUEST_RECORDS_PER_MINUTE: '3' });
    try {
      const tree = await createTree(app);
      const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
      for (let i = 0; i < 5; i++)
        await app.call('GET', `${EXT}/listings?bad=${i}`, { secret: partner.secret });
      const page = await app.call('GET', `${EXT}/requests`, { secret: partner.secret });
      const usage = await app.admin('GET', `/partners/${partner.id}/usage`);
      // Two minutes may have been crossed; either way, kept + not kept = 5, and the partner's
      // own list says how many it does not hold.
      assert.equal(page.body.data.length + usage.totals.failuresNotKept, 5);
      assert.ok(page.body.data.length >= 3 && page.body.data.length <= 5);
      assert.equal(page.body.meta.failuresNotKept, usage.totals.failuresNotKept);
      assert.equal(page.body.meta.failuresNotKept, 5 - page.body.data.length);
      const future = await app.call(
        'GET',
        `${EXT}/requests?since=${new Date(Date.now() + 120_000).toISOString()}`,
        {
          secret: partner.secret,
        },
      );
      assert.equal(future.body.meta.failuresNotKept, 0, 'since narrows the count too');
    } finally {
      await app.close();
    }
    const off = await bootApp({ REQUEST_RECORDS_RETENTION_DAYS: '0' });
    try {
      const tree = await createTree(off);
      const partner = await createPartner(off, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
      assert.equal((await off.call('GET', `${EXT}/listings?bad=1`, { secret: partner.secret })).status, 400);
      const page = await off.call('GET', `${EXT}/requests`, { secret: partner.secret });
      assert.deepEqual(page.body.data, []);
    } finally {
      await off.close();
    }
  });

  test('a database that refuses the records fails no request; the records arrive once it is back', async () => {
    const app = await bootApp();
    try {
      const tree = await createTree(app);
      const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
      await app.running.db.exec('hide', 'ALTER TABLE request_failures RENAME TO request_failures_hidden');
      const id = unique('while-down');
      const refused = await app.call('GET', `${EXT}/listings?bad=1`, {
        secret: partner.secret,
        headers: { 'x-request-id': id },
      });
      assert.equal(refused.status, 400, 'the answer is the request’s own, not the recorder’s');
      const reading = await app.call('GET', `${EXT}/listings`, { secret: partner.secret });
      assert.equal(reading.status, 200);
      await app.running.db.exec('show', 'ALTER TABLE request_failures_hidden RENAME TO request_failures');
      const found = await app.call('GET', `${EXT}/requests/${id}`, { secret: partner.secret });
      assert.equal(found.status, 200, 'kept in memory and written on the next flush');
    } finally {
      await app.close();
    }
  });

  test('a record the database refuses is set aside alone, the rest written; failed writes back off and are logged once', async () => {
    const app = await bootApp();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const store = requestRecordStore(app.running.db);
    /** When each write was tried (ms, performance.now()). */
    let tries: number[] = [];
    const counted = {
      write: (...args: Parameters<typeof store.write>) => {
        tries.push(performance.now());
        return store.write(...args);
      },
      deleteBefore: store.deleteBefore,
    };
    const trouble = { setAside: 0, writeFailed: 0, dropped: 0 };
    const recorder = requestRecorder({
      store: counted,
      logger,
      options: { retentionDays: 7, failuresPerMinute: 100, maxBuffered: 100 },
    });
    recorder.onTrouble({
      setAside: (n) => {
        trouble.setAside += n;
      },
      writeFailed: () => {
        trouble.writeFailed++;
      },
      dropped: (n) => {
        trouble.dropped += n;
      },
    });
    const answered = (requestId: string, status: number) => ({
      requestId,
      partnerId: null,
      key: null,
      method: 'GET',
      route: '/listings',
      status,
      durationMs: 1,
    });
    try {
      // A status no smallint holds stands for any record the database cannot take.
      const ids = Array.from({ length: 7 }, () => unique('floor'));
      for (const [i, id] of ids.entries()) recorder.record(answered(id, i === 3 ? 70_000 : 400));
      await recorder.flush();
      assert.equal(trouble.setAside, 1);
      for (const [i, id] of ids.entries()) {
        const found = await store.failures({ requestId: id, partnerId: null }, 5, null);
        assert.equal(found.length, i === 3 ? 0 : 1, `record ${i}`);
      }
      assert.equal(lines.filter((l) => /request record set aside/.test(l)).length, 1);
      assert.match(lines.find((l) => /set aside/.test(l))!, new RegExp(ids[3]!));

      // A database that takes nothing: the batch waits, the flush loop's tries are spaced out
      // (200, 400, 800 ms: its back-off without jitter), the failure said once.
      await app.running.db.exec('hide', 'ALTER TABLE request_failures RENAME TO request_failures_hidden');
      const waiting = unique('waiting');
      recorder.record(answered(waiting, 400));
      tries = [];
      const flushing = requestRecordsLoop(recorder, { random: () => 0 });
      await flushing.start();
      await eventually(
        () => tries.length >= 4,
        () => `tries: ${tries.length}, expected 4`,
      );
      await flushing.stop(); // its last write fails too
      const gaps = tries.slice(1, 4).map((at, i) => at - tries[i]!);
      for (const [i, waitMs] of [200, 400, 800].entries())
        assert.ok(
          gaps[i]! >= waitMs - 2,
          `try ${i + 2} came ${gaps[i]} ms after the one before, not ${waitMs}`,
        );
      assert.equal(trouble.writeFailed, tries.length, 'each try failed, and was counted');
      assert.equal(lines.filter((l) => /request records not written yet/.test(l)).length, 1);
      await app.running.db.exec('show', 'ALTER TABLE request_failures_hidden RENAME TO request_failures');
      await recorder.flush();
      assert.equal((await store.failures({ requestId: waiting, partnerId: null }, 5, null)).length, 1);
      assert.equal(trouble.dropped, 0);
      assert.ok(lines.some((l) => /request records are written again/.test(l)));
    } finally {
      await app.close();
    }
  });

  test('an outage while a refused batch is halved loses nothing: every part not yet written is kept', async () => {
    const app = await bootApp();
    const logger = pino({ level: 'silent' });
    const store = requestRecordStore(app.running.db);
    let calls = 0;
    const failing = {
      // The database goes away at the fourth write (the batch, the counts, the first half...).
      write: async (...args: Parameters<typeof store.write>) => {
        calls++;
        if (calls === 4)
          throw new DbError(
            Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
            'WriteRequestRecords',
          );
        return store.write(...args);
      },
      deleteBefore: store.deleteBefore,
    };
    let dropped = 0;
    let setAside = 0;
    const recorder = requestRecorder({
      store: failing,
      logger,
      options: { retentionDays: 7, failuresPerMinute: 100, maxBuffered: 100 },
    });
    recorder.onTrouble({
      setAside: (n) => {
        setAside += n;
      },
      writeFailed: () => {},
      dropped: (n) => {
        dropped += n;
      },
    });
    try {
      const ids = Array.from({ length: 8 }, () => unique('halving'));
      for (const [i, id] of ids.entries()) {
        recorder.record({
          requestId: id,
          partnerId: null,
          key: null,
          method: 'GET',
          route: '/listings',
          status: i === 6 ? 70_000 : 400,
          durationMs: 1,
        });
      }
      await recorder.flush(); // refused, halved, then the outage
      await recorder.flush(); // the database is back: the rest is written, the bad one set aside
      assert.equal(dropped, 0);
      assert.equal(setAside, 1);
      for (const [i, id] of ids.entries()) {
        const found = await store.failures({ requestId: id, partnerId: null }, 5, null);
        assert.equal(found.length, i === 6 ? 0 : 1, `record ${i}`);
      }
    } finally {
      await app.close();
    }
  });
});
