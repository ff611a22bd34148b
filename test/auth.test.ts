import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateSecret } from '../src/domain/secrets.js';
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
import { putListing } from './helpers/listings-api.js';
import { assertError, getOk, sorted } from './helpers/read-fixtures.js';

describe('partner authentication, scopes and access', () => {
  let app: TestApp;
  let tree: Tree;
  let reader: { id: string; secret: string };

  const listings = (headers: Record<string, string>) => app.call('GET', `${EXT}/listings`, { headers });

  /** 401 UNAUTHORIZED with the Bearer challenge, and never data. */
  const assertUnauthorized = (reply: Awaited<ReturnType<TestApp['call']>>) => {
    assertError(reply, 401, 'UNAUTHORIZED');
    assert.equal(reply.headers['www-authenticate'], 'Bearer');
  };

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    reader = await createPartner(app, { roots: [tree.ids.A!] });
  });
  after(() => app.close());

  test('a missing secret is 401 UNAUTHORIZED with WWW-Authenticate: Bearer', async () => {
    assertUnauthorized(await listings({}));
    assertUnauthorized(await listings({ authorization: '' }));
    assertUnauthorized(await listings({ 'x-api-key': '  ' }));
    assertUnauthorized(await app.call('GET', `${EXT}/locations`));
    assertUnauthorized(await app.call('GET', `${EXT}/listings/${tree.ids.A}`));
  });

  test('malformed secrets are 401: wrong prefix, length or checksum', async () => {
    const s = reader.secret;
    const flipped = s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
    const body = s.slice(3);
    for (const bad of [
      `xx_${body}`,
      `FC_${body}`,
      s.slice(0, -1),
      `${s}A`,
      flipped,
      `${s.slice(0, 10)}-${s.slice(11)}`,
      'fc_',
      'not-a-secret',
    ]) {
      for (const headers of [{ authorization: `Bearer ${bad}` }, { 'x-api-key': bad }] as Record<
        string,
        string
      >[]) {
        const reply = await listings(headers);
        assertUnauthorized(reply);
        // The message says which case it is: a mistyped or truncated secret
        // (docs/contract.md#presenting-a-secret).
        assert.match(reply.body.error.message, /^The API secret is malformed/, bad);
      }
    }
    // The real secret still works: the rejections above were about the format.
    assert.equal((await listings({ authorization: `Bearer ${s}` })).status, 200);
  });

  test('an unknown but well-formed secret is 401', async () => {
    const stranger = generateSecret();
    assert.notEqual(stranger, reader.secret);
    for (const headers of [{ authorization: `Bearer ${stranger}` }, { 'x-api-key': stranger }] as Record<
      string,
      string
    >[]) {
      const reply = await listings(headers);
      assertUnauthorized(reply);
      // Well-formed but unknown, rotated away or disabled: one answer for the three, no more said.
      assert.match(reply.body.error.message, /^The API secret is not recognized/);
    }
  });

  test('X-API-Key works like Bearer; the scheme is case-insensitive; Basic and a bare token are 401', async () => {
    const viaKey = await listings({ 'x-api-key': reader.secret });
    assert.equal(viaKey.status, 200);
    assert.equal(viaKey.body.meta.partner.id, reader.id);
    assert.equal((await listings({ authorization: `bearer ${reader.secret}` })).status, 200);
    assert.equal((await listings({ authorization: `Bearer   ${reader.secret}  ` })).status, 200);

    const basic = Buffer.from(`user:${reader.secret}`).toString('base64');
    assertUnauthorized(await listings({ authorization: `Basic ${basic}` }));
    assertUnauthorized(await listings({ authorization: `Basic ${reader.secret}` }));
    assertUnauthorized(await listings({ authorization: reader.secret }));
    assertUnauthorized(await listings({ authorization: 'Bearer' }));
    assertUnauthorized(await listings({ authorization: `Bearer ${reader.secret} extra` }));
  });

  test('rotation: the old secret is invalid at once, the new one works', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!] });
    assert.equal((await listings({ authorization: `Bearer ${partner.secret}` })).status, 200);
    const rotated = await app.admin<{ id: string; secret: string; previousSecretValidUntil: string | null }>(
      'POST',
      `/partners/${partner.id}/rotate-secret`,
      {},
    );
    assert.equal(rotated.id, partner.id);
    assert.notEqual(rotated.secret, partner.secret);
    assert.equal(rotated.previousSecretValidUntil, null);
    assertUnauthorized(await listings({ authorization: `Bearer ${partner.secret}` }));
    assertUnauthorized(await listings({ 'x-api-key': partner.secret }));
    const fresh = await listings({ authorization: `Bearer ${rotated.secret}` });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.meta.partner.id, partner.id);
  });

  test('rotation with graceSeconds keeps the old secret working; a later plain rotation ends it', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!] });
    const before = Date.now();
    const graced = await app.admin<{ secret: string; previousSecretValidUntil: string }>(
      'POST',
      `/partners/${partner.id}/rotate-secret`,
      { graceSeconds: 60 },
    );
    const until = Date.parse(graced.previousSecretValidUntil);
    assert.ok(until >= before + 55_000 && until <= Date.now() + 65_000, graced.previousSecretValidUntil);
    assert.equal((await listings({ authorization: `Bearer ${partner.secret}` })).status, 200);
    assert.equal((await listings({ authorization: `Bearer ${graced.secret}` })).status, 200);

    const final = await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/rotate-secret`, {});
    assertUnauthorized(await listings({ authorization: `Bearer ${partner.secret}` }));
    assertUnauthorized(await listings({ authorization: `Bearer ${graced.secret}` }));
    assert.equal((await listings({ authorization: `Bearer ${final.secret}` })).status, 200);
  });

  test('a disabled partner is 401 like an invalid secret; enabling it again restores access', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!] });
    await app.admin('PATCH', `/partners/${partner.id}`, { disabled: true });
    const disabled = await listings({ authorization: `Bearer ${partner.secret}` });
    assertUnauthorized(disabled);
    // Exactly the answer of an unknown secret: "disabled" is not told.
    assert.match(disabled.body.error.message, /^The API secret is not recognized/);
    assertUnauthorized(await listings({ 'x-api-key': partner.secret }));
    assertUnauthorized(await app.call('GET', `${EXT}/locations`, { secret: partner.secret }));
    await app.admin('PATCH', `/partners/${partner.id}`, { disabled: false });
    assert.equal((await listings({ authorization: `Bearer ${partner.secret}` })).status, 200);
  });

  test('without read:locations, GET /locations is 403 INSUFFICIENT_SCOPE naming the scope', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ['read:listings'] });
    const reply = await app.call('GET', `${EXT}/locations`, { secret: partner.secret });
    const error = assertError(reply, 403, 'INSUFFICIENT_SCOPE');
    assert.match(error.message, /read:locations/);
    // Its other scope still works.
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: partner.secret })).status, 200);
  });

  test('without read:listings, every listing read is 403 INSUFFICIENT_SCOPE naming the scope', async () => {
    const writer = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const listingId = await putListing(
      app,
      writer.secret,
      unique('ref'),
      listingBody({ dealerProfileId: tree.ids.A }),
    );
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ['read:locations'] });
    for (const path of ['/listings', `/locations/${tree.ids.A}/listings`, `/listings/${listingId}`]) {
      const reply = await app.call('GET', `${EXT}${path}`, { secret: partner.secret });
      const error = assertError(reply, 403, 'INSUFFICIENT_SCOPE');
      assert.match(error.message, /read:listings/, path);
    }
    assert.equal((await app.call('GET', `${EXT}/locations`, { secret: partner.secret })).status, 200);
    // The scope check comes after authentication: a bad secret is still 401.
    assertUnauthorized(await app.call('GET', `${EXT}/listings`, { secret: generateSecret() }));
  });

  test('a read-only partner gets 403 INSUFFICIENT_SCOPE on every write and nothing is written', async () => {
    const ref = unique('ro');
    const writes: [string, string, unknown][] = [
      ['PUT', `/listings/${ref}`, listingBody({ dealerProfileId: tree.ids.A })],
      ['POST', '/listings/bulk-upsert', [{ externalReference: ref, ...listingBody() }]],
      ['POST', `/listings/${ref}/status`, { status: 'sold' }],
      ['DELETE', `/listings/${ref}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      const reply = await app.call(method, `${EXT}${path}`, { secret: reader.secret, body });
      const error = assertError(reply, 403, 'INSUFFICIENT_SCOPE');
      assert.match(error.message, /write:listings/, `${method} ${path}`);
    }
    const all = await getOk(app, reader.secret, '/listings?status=all');
    assert.ok(!all.data.some((l: { externalReference: string }) => l.externalReference === ref));
  });

  test('meta.partner of a restricted partner: roots plus every descendant at any depth', async () => {
    // One level deeper than the helper tree: A ─ A1 ─ A1a ─ A1a1.
    const deep = await app.admin<{ id: string }>('POST', '/dealers', {
      locationCode: unique('A1a1'),
      parentId: tree.ids.A1a,
    });
    const name = unique('Feed');
    const partner = await createPartner(app, { roots: [tree.ids.A!], name });
    const body = await getOk(app, partner.secret, '/listings');
    const { access, ...rest } = body.meta.partner;
    assert.deepEqual(rest, { id: partner.id, name });
    assert.equal(access.scope, 'restricted');
    assert.deepEqual(access.rootProfileIds, [tree.ids.A]);
    assert.deepEqual(
      sorted(access.profileIds),
      sorted([tree.ids.A!, tree.ids.A1!, tree.ids.A1a!, deep.id, tree.ids.A2!]),
    );

    // Two roots, one inside the other, plus a sibling subtree: no duplicates, no parents.
    const multi = await createPartner(app, { roots: [tree.ids.A1!, tree.ids.A1a!, tree.ids.B1!] });
    const m = (await getOk(app, multi.secret, '/listings')).meta.partner.access;
    assert.deepEqual(sorted(m.rootProfileIds), sorted([tree.ids.A1!, tree.ids.A1a!, tree.ids.B1!]));
    assert.deepEqual(sorted(m.profileIds), sorted([tree.ids.A1!, tree.ids.A1a!, deep.id, tree.ids.B1!]));

    // The scope follows the tree: a location added later is in it on the next request.
    const later = await app.admin<{ id: string }>('POST', '/dealers', {
      locationCode: unique('A2x'),
      parentId: tree.ids.A2,
    });
    const again = (await getOk(app, partner.secret, '/locations?withCounts=false')).meta.partner.access;
    assert.ok(again.profileIds.includes(later.id));
    assert.equal(again.profileIds.length, 6);
  });

  test('meta.partner of a global partner is {scope: global, rootProfileIds: [], profileIds: []}', async () => {
    const name = unique('Global');
    const partner = await createPartner(app, { global: true, name });
    for (const path of ['/listings', '/locations?withCounts=false', `/locations/${tree.ids.B}/listings`]) {
      const body = await getOk(app, partner.secret, path);
      assert.deepEqual(body.meta.partner, {
        id: partner.id,
        name,
        access: { scope: 'global', rootProfileIds: [], profileIds: [] },
      });
    }
  });

  test('the admin API is 401 without the operator token, with a wrong one, or with a partner secret', async () => {
    const token = app.running.adminToken;
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${token}x` },
      { authorization: `Basic ${token}` },
      { authorization: `Bearer ${reader.secret}` },
      { 'x-api-key': token },
    ] as Record<string, string>[]) {
      const reply = await app.call('GET', '/api/admin/v1/partners', { headers });
      assertError(reply, 401, 'UNAUTHORIZED');
    }
    const rotate = await app.call('POST', `/api/admin/v1/partners/${reader.id}/rotate-secret`, {
      headers: { authorization: 'Bearer wrong-token' },
    });
    assertError(rotate, 401, 'UNAUTHORIZED');
    // The reader's secret was not rotated by the refused call.
    assert.equal((await listings({ authorization: `Bearer ${reader.secret}` })).status, 200);
    const ok = await app.call('GET', '/api/admin/v1/partners', {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ok.status, 200);
  });
});
