import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { hashSecret } from '../src/domain/secrets.js';
import { auditStore } from '../src/store/audit.js';
import { dealerStore } from '../src/store/dealers.js';
import { bootApp, createTree, type TestApp, unique } from './helpers/app.js';
import { baseEnv } from './helpers/base-env.js';

const BIN = path.resolve(import.meta.dirname, '../bin/forecourt.js');

// Test files may share one PostgreSQL database (and its audit log): every assertion looks only at
// entries of this file's partners, dealers or request ids, never at "the newest entry".
describe('audit log', () => {
  let app: TestApp;
  let tree: Awaited<ReturnType<typeof createTree>>;
  const adminHeaders = () => ({ authorization: `Bearer ${app.running.adminToken}` });

  /** An admin call under a request id of our choosing, so its entries can be found by it. */
  const act = async (method: string, urlPath: string, requestId: string, body?: unknown) => {
    const reply = await app.call(method, `/api/admin/v1${urlPath}`, {
      headers: { ...adminHeaders(), 'x-request-id': requestId },
      body,
    });
    assert.ok(reply.status < 300, `${method} ${urlPath} → ${reply.status} ${reply.text}`);
    return reply.body.data;
  };
  const log = async (query: string) => {
    const reply = await app.call('GET', `/api/admin/v1/audit-log?${query}`, { headers: adminHeaders() });
    assert.equal(reply.status, 200, reply.text);
    return reply;
  };
  const entries = async (query: string) => (await log(query)).body.data as any[];
  /** An entry without its id and time, for comparing whole entries. */
  const content = ({ id, at, ...rest }: any) => {
    assert.match(id, /^\d+$/);
    assert.ok(!Number.isNaN(Date.parse(at)), at);
    return rest;
  };
  const operator = (requestId: string) => ({
    actor: 'operator',
    operator: 'ADMIN_TOKEN',
    clientIp: '127.0.0.1',
    requestId,
  });

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
  });
  after(() => app.close());

  test('partner actions: each recorded once, with request id, client address and exactly what changed', async () => {
    const rid = unique('audit-partner');
    const name = unique('Audited');
    const created = await act('POST', '/partners', `${rid}-create`, {
      name,
      access: { scope: 'restricted', rootProfileIds: [tree.ids.A] },
    });
    const id = created.id as string;
    await act('PATCH', `/partners/${id}`, `${rid}-scopes`, {
      scopes: ['read:listings'],
      rateLimitPerMinute: 50,
    });
    await act('PATCH', `/partners/${id}`, `${rid}-disable`, { disabled: true });
    // Nothing changes: no entry.
    await act('PATCH', `/partners/${id}`, `${rid}-same`, { disabled: true, name, rateLimitPerMinute: 50 });
    // Enabling and other fields in one request: enabled is its own entry, never part of `changes`.
    await act('PATCH', `/partners/${id}`, `${rid}-enable`, {
      disabled: false,
      name: `${name} renamed`,
      access: { scope: 'global' },
    });
    const rotated = await act('POST', `/partners/${id}/rotate-secret`, `${rid}-rotate`, { graceSeconds: 60 });
    const rotatedAgain = await act('POST', `/partners/${id}/rotate-secret`, `${rid}-rotate-now`);

    const partnerEntry = (requestId: string, action: string, details: Record<string, unknown>) => ({
      ...operator(requestId),
      action,
      partnerId: id,
      // Named as the partner is now, renamed or not when the entry was written.
      partnerName: `${name} renamed`,
      dealerId: null,
      dealerCode: null,
      details,
    });
    assert.deepEqual((await entries(`partnerId=${id}`)).map(content), [
      partnerEntry(`${rid}-rotate-now`, 'partner.secret_rotated', { graceSeconds: 0 }),
      partnerEntry(`${rid}-rotate`, 'partner.secret_rotated', { graceSeconds: 60 }),
      partnerEntry(`${rid}-enable`, 'partner.updated', {
        changes: {
          name: { from: name, to: `${name} renamed` },
          access: { from: { scope: 'restricted', rootProfileIds: [tree.ids.A] }, to: { scope: 'global' } },
        },
      }),
      partnerEntry(`${rid}-enable`, 'partner.enabled', {}),
      partnerEntry(`${rid}-disable`, 'partner.disabled', {}),
      partnerEntry(`${rid}-scopes`, 'partner.updated', {
        changes: {
          scopes: { from: ['read:listings', 'read:locations'], to: ['read:listings'] },
          rateLimitPerMinute: { from: null, to: 50 },
        },
      }),
      partnerEntry(`${rid}-create`, 'partner.created', {
        name,
        scopes: ['read:listings', 'read:locations'],
        access: { scope: 'restricted', rootProfileIds: [tree.ids.A] },
        rateLimitPerMinute: null,
      }),
    ]);

    // Neither a secret nor its stored hash, in this partner's entries or anywhere in the log.
    for (const text of [(await log(`partnerId=${id}`)).text, (await log('limit=500')).text]) {
      for (const secret of [created.secret, rotated.secret, rotatedAgain.secret] as string[]) {
        const hash = hashSecret(secret);
        for (const needle of [secret, secret.slice(3), hash.toString('hex'), hash.toString('base64')]) {
          assert.ok(!text.includes(needle), 'no secret or secret hash in the audit log');
        }
      }
    }
  });

  test('concurrent updates of one partner: each entry starts from what the one before it left', async () => {
    const { id } = await app.admin('POST', '/partners', {
      name: unique('Racing'),
      access: { scope: 'global' },
    });
    const limits = Array.from({ length: 12 }, (_, i) => 100 + i);
    await Promise.all(limits.map((n) => app.admin('PATCH', `/partners/${id}`, { rateLimitPerMinute: n })));
    const chain = (await entries(`partnerId=${id}&action=partner.updated`))
      .reverse()
      .map((e) => e.details.changes.rateLimitPerMinute);
    assert.equal(chain.length, limits.length);
    assert.equal(chain[0].from, null);
    for (let i = 1; i < chain.length; i++) assert.equal(chain[i].from, chain[i - 1].to, `entry ${i}`);
    assert.equal(chain.at(-1).to, (await app.admin('GET', `/partners/${id}`)).rateLimitPerMinute);
  });

  test('a change that fails leaves no entry (it is written in the same transaction)', async () => {
    const rid = unique('audit-fail');
    const { id } = await act('POST', '/partners', `${rid}-create`, {
      name: unique('Fails'),
      access: { scope: 'global' },
    });
    const refused = await app.call('PATCH', `/api/admin/v1/partners/${id}`, {
      headers: { ...adminHeaders(), 'x-request-id': `${rid}-patch` },
      body: {
        name: 'Not applied',
        access: { scope: 'restricted', rootProfileIds: ['00000000-0000-4000-8000-000000000000'] },
      },
    });
    assert.equal(refused.status, 422);
    assert.deepEqual(
      (await entries(`partnerId=${id}`)).map((e) => e.action),
      ['partner.created'],
    );

    // A location code already taken: 409, no dealer.created.
    const taken = await app.call('POST', '/api/admin/v1/dealers', {
      headers: { ...adminHeaders(), 'x-request-id': `${rid}-dealer` },
      body: { locationCode: tree.codes.A },
    });
    assert.equal(taken.status, 409);
    // An import whose second node fails: nothing of it lands, the first node's creation included.
    const fresh = unique('AUDF');
    const broken = await app.call('POST', '/api/admin/v1/dealers/import', {
      headers: { ...adminHeaders(), 'x-request-id': `${rid}-import` },
      body: {
        dealers: [{ locationCode: fresh }, { locationCode: unique('AUDF'), parentLocationCode: 'NOPE-X' }],
      },
    });
    assert.equal(broken.status, 422, broken.text);
    const dealerEntries = [
      ...(await entries('action=dealer.&limit=500')),
      ...(await entries('action=dealers.&limit=500')),
    ];
    assert.deepEqual(
      dealerEntries.filter((e) => e.requestId?.startsWith(rid)),
      [],
    );
    assert.equal((await dealerStore(app.running.db).idsByCodes([fresh])).size, 0);
  });

  test('dealer actions: created, updated (changed fields only), imported (counts)', async () => {
    const rid = unique('audit-dealer');
    const code = unique('AUD');
    const dealer = await act('POST', '/dealers', `${rid}-create`, { locationCode: code, city: 'Gent' });
    await act('PATCH', `/dealers/${dealer.id}`, `${rid}-patch`, {
      city: 'Brugge',
      displayName: 'Audit dealer',
      locationCode: code,
    });
    const added = unique('AUDI');
    await act('POST', '/dealers/import', `${rid}-import`, {
      dealers: [{ locationCode: code, city: 'Brugge' }, { locationCode: added }],
    });

    const mine = (await entries('action=dealer.&limit=500')).filter((e) => e.dealerId === dealer.id);
    assert.deepEqual(mine.map(content), [
      {
        ...operator(`${rid}-patch`),
        action: 'dealer.updated',
        partnerId: null,
        partnerName: null,
        dealerId: dealer.id,
        dealerCode: code,
        details: {
          changes: { city: { from: 'Gent', to: 'Brugge' }, displayName: { from: null, to: 'Audit dealer' } },
        },
      },
      {
        ...operator(`${rid}-create`),
        action: 'dealer.created',
        partnerId: null,
        partnerName: null,
        dealerId: dealer.id,
        dealerCode: code,
        details: { locationCode: code, parentId: null, city: 'Gent' },
      },
    ]);
    const imported = (await entries('action=dealers.imported&limit=500')).filter(
      (e) => e.requestId === `${rid}-import`,
    );
    assert.deepEqual(imported.map(content), [
      {
        ...operator(`${rid}-import`),
        action: 'dealers.imported',
        partnerId: null,
        partnerName: null,
        dealerId: null,
        dealerCode: null,
        // The existing dealer was sent as stored: unchanged, not updated.
        details: { created: 1, updated: 0, unchanged: 1, locationCodes: [code, added] },
      },
    ]);
  });

  test('failed partner authentications: actor anonymous, the reason, never the secret', async () => {
    const rid = unique('audit-auth');
    const attempt = 'fc_notARealSecretButLongEnoughToLookLikeOne1234';
    const reply = await app.call('GET', '/api/external/v1/listings', {
      secret: attempt,
      headers: { 'x-request-id': rid },
    });
    assert.equal(reply.status, 401);
    // The 401 does not wait for the entry: poll briefly.
    let entry: any;
    for (let i = 0; i < 50 && !entry; i++) {
      entry = (await entries('action=auth.failed&limit=500')).find((e) => e.requestId === rid);
      if (!entry) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(entry, 'recorded');
    assert.deepEqual(content(entry), {
      actor: 'anonymous',
      operator: null,
      action: 'auth.failed',
      partnerId: null,
      partnerName: null,
      dealerId: null,
      dealerCode: null,
      clientIp: '127.0.0.1',
      requestId: rid,
      details: { reason: 'malformed' },
    });
    assert.ok(!JSON.stringify(entry).includes(attempt.slice(3)));

    // With the partner, when the caller knows which one the secret belonged to.
    const authName = unique('Auth');
    const { id } = await app.admin('POST', '/partners', {
      name: authName,
      access: { scope: 'global' },
    });
    await auditStore(app.running.db).recordAuthFailure({
      clientIp: '192.0.2.7',
      requestId: `${rid}-known`,
      reason: 'disabled',
      partnerId: id,
    });
    const [known] = await entries(`action=auth.failed&partnerId=${id}`);
    assert.deepEqual(content(known), {
      actor: 'anonymous',
      operator: null,
      action: 'auth.failed',
      partnerId: id,
      partnerName: authName,
      dealerId: null,
      dealerCode: null,
      clientIp: '192.0.2.7',
      requestId: `${rid}-known`,
      details: { reason: 'disabled' },
    });
  });

  test('filters: exact action, prefix, partner, since/until; pages newest first until nextBefore is null', async () => {
    const rid = unique('audit-page');
    const { id } = await act('POST', '/partners', `${rid}-0`, {
      name: unique('Paged'),
      access: { scope: 'global' },
    });
    for (let i = 1; i <= 4; i++)
      await act('PATCH', `/partners/${id}`, `${rid}-${i}`, { rateLimitPerMinute: i * 10 });
    await act('POST', `/partners/${id}/rotate-secret`, `${rid}-5`);
    const all = await entries(`partnerId=${id}`);
    assert.deepEqual(
      all.map((e) => e.requestId),
      [5, 4, 3, 2, 1, 0].map((i) => `${rid}-${i}`),
    );
    assert.equal((await log(`partnerId=${id}`)).body.pagination.nextBefore, null);

    // Pages of 2 walk the same entries, and the last page says there is no more.
    const walked: any[] = [];
    let before: string | null = '';
    let pages = 0;
    while (before !== null) {
      const page = await log(`partnerId=${id}&limit=2${before ? `&before=${before}` : ''}`);
      walked.push(...page.body.data);
      before = page.body.pagination.nextBefore;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(walked, all);

    const actions = async (query: string) => (await entries(`partnerId=${id}&${query}`)).map((e) => e.action);
    assert.deepEqual(await actions('action=partner.updated'), Array(4).fill('partner.updated'));
    assert.deepEqual(await actions('action=partner.secret_rotated'), ['partner.secret_rotated']);
    assert.deepEqual(
      await actions('action=partner.'),
      all.map((e) => e.action),
    );
    assert.deepEqual(await actions('action=partner'), []); // no dot: an exact action, which none is
    assert.deepEqual(await actions('action=dealer.'), []);

    // since is inclusive, until exclusive; the API's times have milliseconds, the database's more.
    const created = all.at(-1);
    const ms = (iso: string, delta: number) => new Date(Date.parse(iso) + delta).toISOString();
    assert.equal((await entries(`partnerId=${id}&until=${ms(created.at, 1)}`)).at(-1)?.id, created.id);
    assert.deepEqual(await entries(`partnerId=${id}&until=${created.at}`), []);
    assert.equal((await entries(`partnerId=${id}&since=${created.at}`)).length, 6);
    assert.equal((await entries(`partnerId=${id}&since=${all[0].at}`))[0]?.id, all[0].id);
    assert.deepEqual(await entries(`partnerId=${id}&since=${ms(all[0].at, 1)}`), []);
    const future = await log('since=2999-01-01');
    assert.deepEqual(future.body.data, []);
    assert.equal(future.body.pagination.nextBefore, null);
  });

  test('bad queries answer 400 INVALID_QUERY; no admin token answers 401', async () => {
    for (const query of [
      'limit=0',
      'limit=501',
      'since=yesterday',
      'until=2026-02-30',
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

  test('forecourt audit-log prints entries as a table or JSON', async () => {
    const rid = unique('audit-cli');
    const { id, secret } = await act('POST', '/partners', `${rid}-create`, {
      name: unique('Cli'),
      access: { scope: 'global' },
    });
    await act('PATCH', `/partners/${id}`, `${rid}-disable`, { disabled: true });
    // As an operator runs it: the command itself, finding token and certificate in DATA_DIR.
    const forecourt = (...args: string[]) =>
      promisify(execFile)(process.execPath, [BIN, 'audit-log', ...args, '--url', app.url], {
        env: { ...baseEnv(), DATA_DIR: app.dataDir },
      });
    const json = JSON.parse((await forecourt('--partner', id, '--json')).stdout) as any[];
    assert.deepEqual(
      json.map((e) => [e.action, e.requestId]),
      [
        ['partner.disabled', `${rid}-disable`],
        ['partner.created', `${rid}-create`],
      ],
    );
    const table = (await forecourt('--partner', id, '--action', 'partner.created', '--limit', '5')).stdout;
    assert.match(table, /^AT\s+ACTION\s+SUBJECT/);
    assert.match(table, new RegExp(`partner\\.created\\s+${id}\\s+127\\.0\\.0\\.1\\s.*${rid}-create$`, 'm'));
    assert.doesNotMatch(table, /partner\.disabled/);
    assert.ok(!table.includes(secret));
  });
});
