import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bootApp, createTree, type TestApp, unique } from './helpers/app.js';

describe('audit log', () => {
  let app: TestApp;
  let tree: Awaited<ReturnType<typeof createTree>>;
  const adminHeaders = () => ({ authorization: `Bearer ${app.running.services.adminToken}` });
  const log = async (query: string) => {
    const reply = await app.call('GET', `/api/admin/v1/audit-log?${query}`, { headers: adminHeaders() });
    assert.equal(reply.status, 200, reply.text);
    return reply;
  };

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
  });
  after(() => app.close());

  test('partner actions are recorded with request id, client address and what changed; never a secret', async () => {
    const created = await app.call('POST', '/api/admin/v1/partners', {
      headers: { ...adminHeaders(), 'x-request-id': 'audit-create-1' },
      body: { name: unique('Audited'), access: { scope: 'restricted', rootProfileIds: [tree.ids.A] } },
    });
    assert.equal(created.status, 201);
    const id = created.body.data.id as string;
    await app.admin('PATCH', `/partners/${id}`, { scopes: ['read:listings'], rateLimitPerMinute: 50 });
    await app.admin('PATCH', `/partners/${id}`, { disabled: true });
    await app.admin('PATCH', `/partners/${id}`, { disabled: true }); // no change: no entry
    const rotated = await app.admin('POST', `/partners/${id}/rotate-secret`, { graceSeconds: 60 });

    const reply = await log(`partnerId=${id}`);
    const entries = reply.body.data as any[];
    assert.deepEqual(
      entries.map((e) => e.action),
      ['partner.secret_rotated', 'partner.disabled', 'partner.updated', 'partner.created'],
    );
    const [rotation, disabled, updated, creation] = entries;
    assert.equal(creation.requestId, 'audit-create-1');
    assert.equal(creation.actor, 'operator');
    assert.equal(creation.clientIp, '127.0.0.1');
    assert.deepEqual(creation.details.access, { scope: 'restricted', rootProfileIds: [tree.ids.A] });
    assert.deepEqual(updated.details.changes, {
      scopes: { from: ['read:listings', 'read:locations'], to: ['read:listings'] },
      rateLimitPerMinute: { from: null, to: 50 },
    });
    assert.equal(disabled.partnerId, id);
    assert.deepEqual(rotation.details, { graceSeconds: 60 });
    for (const secret of [created.body.data.secret, rotated.secret]) {
      assert.ok(!reply.text.includes(secret), 'no secret in the audit log');
    }
  });

  test('a change that fails leaves no entry (same transaction)', async () => {
    const { id } = await app.admin('POST', '/partners', {
      name: unique('Fails'),
      access: { scope: 'global' },
    });
    const refused = await app.call('PATCH', `/api/admin/v1/partners/${id}`, {
      headers: adminHeaders(),
      body: { access: { scope: 'restricted', rootProfileIds: ['00000000-0000-4000-8000-000000000000'] } },
    });
    assert.equal(refused.status, 422);
    const entries = (await log(`partnerId=${id}`)).body.data as any[];
    assert.deepEqual(
      entries.map((e) => e.action),
      ['partner.created'],
    );
  });

  test('dealer actions: created, updated (changed fields only), imported', async () => {
    const code = unique('AUD');
    const dealer = await app.admin('POST', '/dealers', { locationCode: code, city: 'Gent' });
    await app.admin('PATCH', `/dealers/${dealer.id}`, { city: 'Brugge', displayName: 'Audit dealer' });
    await app.admin('POST', '/dealers/import', { dealers: [{ locationCode: unique('AUDI') }] });
    const dealerEntries = (await log('action=dealer.')).body.data as any[];
    const mine = dealerEntries.filter((e) => e.dealerId === dealer.id);
    assert.deepEqual(
      mine.map((e) => e.action),
      ['dealer.updated', 'dealer.created'],
    );
    assert.deepEqual(mine[0].details.changes.city, { from: 'Gent', to: 'Brugge' });
    assert.equal(mine[0].details.changes.locationCode, undefined);
    const imported = (await log('action=dealers.imported&limit=1')).body.data as any[];
    assert.equal(imported[0].details.created, 1);
  });

  test('failed partner authentications are recorded with the reason, without the secret', async () => {
    const attempt = 'fc_notARealSecretButLongEnoughToLookLikeOne1234';
    const reply = await app.call('GET', '/api/external/v1/listings', {
      secret: attempt,
      headers: { 'x-request-id': 'audit-auth-1' },
    });
    assert.equal(reply.status, 401);
    let entry: any;
    for (let i = 0; i < 50 && !entry; i++) {
      entry = ((await log('action=auth.failed')).body.data as any[]).find(
        (e) => e.requestId === 'audit-auth-1',
      );
      if (!entry) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(entry, 'recorded');
    assert.equal(entry.actor, 'anonymous');
    assert.equal(entry.clientIp, '127.0.0.1');
    assert.equal(entry.details.reason, 'malformed');
    assert.ok(!JSON.stringify(entry).includes(attempt.slice(3)));
  });

  test('pagination newest first with before=, time filters, and clear 400s for bad queries', async () => {
    const first = await log('limit=2');
    assert.equal(first.body.data.length, 2);
    const next = first.body.pagination.nextBefore as string;
    assert.equal(next, first.body.data[1].id);
    const second = await log(`limit=2&before=${next}`);
    assert.ok(BigInt(second.body.data[0].id) < BigInt(next));
    const future = await log('since=2999-01-01');
    assert.deepEqual(future.body.data, []);
    assert.equal(future.body.pagination.nextBefore, null);
    for (const query of [
      'limit=0',
      'limit=501',
      'since=yesterday',
      'partnerId=nope',
      'action=DROP%20TABLE',
      'before=abc',
    ]) {
      const bad = await app.call('GET', `/api/admin/v1/audit-log?${query}`, { headers: adminHeaders() });
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.error.code, 'INVALID_QUERY');
    }
    assert.equal((await app.call('GET', '/api/admin/v1/audit-log')).status, 401);
  });
});
