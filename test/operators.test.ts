import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ALL_SCOPES, bootApp, EXT, type TestApp, unique } from './helpers/app.js';

/**
 * Operator accounts: named tokens created by an operator, listed and revoked; the audit log says
 * which operator acted, and names partners and dealers instead of bare ids.
 */
let app: TestApp;
const ADMIN = '/api/admin/v1';

before(async () => {
  app = await bootApp();
});
after(() => app.close());

const as = (token: string, method: string, path: string, body?: unknown) =>
  app.call(method, `${ADMIN}${path}`, { headers: { authorization: `Bearer ${token}` }, body });

test('a named token signs in as its operator; the audit log records who acted, with names', async () => {
  const name = unique('Alice');
  const created = await app.admin('POST', '/operators', { name });
  assert.match(created.token, /^fco_[0-9a-f]{48}$/);
  assert.equal(created.createdBy, 'ADMIN_TOKEN');
  const me = await as(created.token, 'GET', '/operators/me');
  assert.deepEqual(me.body.data, { id: created.id, name });

  // Alice creates a dealer and a partner; the entries name her, the partner and the dealer.
  const dealer = await as(created.token, 'POST', '/dealers', {
    locationCode: unique('GENT'),
    displayName: 'Gent',
  });
  assert.equal(dealer.status, 201, dealer.text);
  const partnerName = unique('Acme');
  const partner = await as(created.token, 'POST', '/partners', {
    name: partnerName,
    scopes: ALL_SCOPES,
    access: { scope: 'restricted', rootProfileIds: [dealer.body.data.id] },
  });
  assert.equal(partner.status, 201, partner.text);
  const entries = await app.admin('GET', '/audit-log?limit=10');
  const partnerEntry = entries.find((e: { action: string }) => e.action === 'partner.created');
  assert.deepEqual(
    [partnerEntry.operator, partnerEntry.partnerId, partnerEntry.partnerName],
    [name, partner.body.data.id, partnerName],
  );
  const dealerEntry = entries.find((e: { action: string }) => e.action === 'dealer.created');
  assert.deepEqual([dealerEntry.operator, dealerEntry.dealerCode], [name, dealer.body.data.locationCode]);
  const createdEntry = entries.find((e: { action: string }) => e.action === 'operator.created');
  assert.deepEqual([createdEntry.operator, createdEntry.details.name], ['ADMIN_TOKEN', name]);
});

test("names are unique, revoked tokens' names too; a revoked token is refused at once and listed as revoked", async () => {
  const name = unique('Bob');
  const bob = await app.admin('POST', '/operators', { name });
  const twice = await as(app.running.adminToken, 'POST', '/operators', { name: name.toUpperCase() });
  assert.equal(twice.status, 409);
  assert.equal(twice.body.error.code, 'CONFLICT');
  assert.match(twice.body.error.message, /already exists/);

  // Bob revokes nobody but himself: the revocation is recorded under his name.
  const revoked = await as(bob.token, 'DELETE', `/operators/${bob.id}`);
  assert.equal(revoked.status, 200);
  assert.ok(revoked.body.data.revokedAt);
  const refused = await as(bob.token, 'GET', '/operators/me');
  assert.equal(refused.status, 401);
  assert.match(refused.body.error.message, /operator token/);
  const again = await as(app.running.adminToken, 'DELETE', `/operators/${bob.id}`);
  assert.equal(again.status, 404);

  const listed = await app.admin('GET', '/operators');
  const row = listed.find((o: { id: string }) => o.id === bob.id);
  assert.ok(row.revokedAt && row.lastUsedAt, 'revoked, and used before');
  assert.equal(JSON.stringify(listed).includes(bob.token), false, 'tokens are never listed');
  const [entry] = await app.admin('GET', '/audit-log?action=operator.revoked&limit=1');
  assert.equal(entry.operator, name);
  // The name is never given to a second operator (issue 46): the audit log must not show two
  // operators as one. The refusal says whose it was.
  const reused = await as(app.running.adminToken, 'POST', '/operators', { name: name.toLowerCase() });
  assert.equal(reused.status, 409);
  assert.match(
    reused.body.error.message,
    /had a token, revoked at .*; a name is never given to a second operator/,
  );
});

test('bad names and unknown tokens are refused with the reason', async () => {
  for (const [body, path] of [
    [{ name: '' }, 'body.name'],
    [{ name: 'a\u0007b' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ name: 'ok', role: 'admin' }, 'body.role'],
  ] as const) {
    const reply = await as(app.running.adminToken, 'POST', '/operators', body);
    assert.equal(reply.status, 422, JSON.stringify(body));
    const paths = reply.body.error.issues.map((i: { path: string }) => i.path);
    assert.deepEqual(paths, [path], JSON.stringify(body));
  }
  const unknown = await as(`fco_${'0'.repeat(48)}`, 'GET', '/operators');
  assert.equal(unknown.status, 401);
  // An operator token is not a partner secret.
  const op = await app.admin('POST', '/operators', { name: unique('Carol') });
  const asPartner = await app.call('GET', `${EXT}/listings`, { secret: op.token });
  assert.equal(asPartner.status, 401);
});
