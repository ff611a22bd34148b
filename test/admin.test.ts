import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { bootApp, createPartner, createTree, type TestApp, unique } from './helpers/app.js';

describe('operator API', () => {
  let app: TestApp;
  let token: string;
  const admin = (method: string, path: string, body?: unknown) =>
    app.call(method, `/api/admin/v1${path}`, { body, headers: { authorization: `Bearer ${token}` } });

  before(async () => {
    app = await bootApp();
    token = app.running.adminToken;
  });
  after(() => app.close());

  test('the generated admin token is stored with mode 0600 and required on every admin route', async () => {
    const { statSync } = await import('node:fs');
    assert.equal(statSync(`${app.dataDir}/admin-token`).mode & 0o777, 0o600);
    assert.equal((await app.call('GET', '/api/admin/v1/dealers')).status, 401);
    const wrong = await app.call('GET', '/api/admin/v1/partners', {
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'UNAUTHORIZED');
  });

  test('dealers: create with parent by code, duplicate code (any case) is 409, unknown parent is 422', async () => {
    const code = unique('GRP');
    const parent = await admin('POST', '/dealers', {
      locationCode: code,
      displayName: 'Group',
      city: 'Gent',
    });
    assert.equal(parent.status, 201);
    const child = await admin('POST', '/dealers', {
      locationCode: unique('LOC'),
      parentLocationCode: code.toLowerCase(),
    });
    assert.equal(child.status, 201);
    assert.equal(child.body.data.parentId, parent.body.data.id);
    assert.deepEqual(child.body.data.parent, {
      id: parent.body.data.id,
      locationCode: code,
      companyName: null,
      fullName: null,
      displayName: 'Group',
    });

    const duplicate = await admin('POST', '/dealers', { locationCode: code.toLowerCase() });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error.code, 'CONFLICT');
    assert.equal(
      duplicate.body.error.message,
      `Location code "${code.toLowerCase()}" is already in use (codes are case-insensitive).`,
    );
    // Renaming another profile to a code in use is the same conflict.
    const renamed = await admin('PATCH', `/dealers/${child.body.data.id}`, { locationCode: code });
    assert.equal(renamed.status, 409, renamed.text);
    assert.equal(renamed.body.error.code, 'CONFLICT');

    const orphan = await admin('POST', '/dealers', {
      locationCode: unique('X'),
      parentLocationCode: 'does-not-exist',
    });
    assert.equal(orphan.status, 422);
    assert.equal(orphan.body.error.code, 'VALIDATION_FAILED');

    const invalid = await admin('POST', '/dealers', { locationCode: '', email: 'not-an-email' });
    assert.equal(invalid.status, 422);
    assert.deepEqual([...new Set(invalid.body.error.issues.map((i: { path: string }) => i.path))].sort(), [
      'body.email',
      'body.locationCode',
    ]);
  });

  test('dealers: a parent change that would make a cycle is refused with 422, at any depth', async () => {
    const tree = await createTree(app);
    const toGrandchild = await admin('PATCH', `/dealers/${tree.ids.A}`, { parentId: tree.ids.A1a });
    assert.equal(toGrandchild.status, 422);
    assert.deepEqual(toGrandchild.body.error.issues, [
      { path: 'parentId', message: 'this parent would make the profile its own ancestor', code: 'invalid' },
    ]);
    const toSelf = await admin('PATCH', `/dealers/${tree.ids.B}`, { parentId: tree.ids.B });
    assert.equal(toSelf.status, 422);
    // The cycle trigger runs before the table's own check, and a profile is its own ancestor too.
    assert.equal(toSelf.body.error.message, 'parentId: this parent would make the profile its own ancestor');
    const toNobody = await admin('PATCH', `/dealers/${tree.ids.B}`, { parentId: randomUUID() });
    assert.equal(toNobody.status, 422, toNobody.text);
    assert.deepEqual(toNobody.body.error.issues, [
      { path: 'parentId', message: 'no dealer profile has this id', code: 'invalid' },
    ]);
    const created = await admin('POST', '/dealers', { locationCode: unique('ORPH'), parentId: randomUUID() });
    assert.equal(created.status, 422, created.text);
    assert.equal(created.body.error.message, 'parentId: no dealer profile has this id');
    // A legal move still works.
    const move = await admin('PATCH', `/dealers/${tree.ids.A2}`, { parentId: tree.ids.B });
    assert.equal(move.status, 200);
    assert.equal(move.body.data.parentId, tree.ids.B);
  });

  test('dealers import: a whole tree in one transaction, idempotent by location code, all or nothing', async () => {
    const root = unique('IMP');
    const body = {
      dealers: [
        {
          locationCode: root,
          children: [{ locationCode: `${root}-1`, children: [{ locationCode: `${root}-1a` }] }],
        },
      ],
    };
    const first = await admin('POST', '/dealers/import', body);
    assert.equal(first.status, 200);
    assert.equal(first.body.data.created, 3);
    const again = await admin('POST', '/dealers/import', body);
    assert.equal(again.body.data.created, 0);
    // The same tree again: nothing changed, and the answer says so.
    assert.deepEqual([again.body.data.updated, again.body.data.unchanged], [0, 3]);

    const broken = await admin('POST', '/dealers/import', {
      dealers: [
        { locationCode: unique('NEW') },
        { locationCode: `${root}-x`, parentLocationCode: 'missing-parent' },
      ],
    });
    assert.equal(broken.status, 422);
    const all = await admin('GET', '/dealers');
    assert.ok(!all.body.data.some((d: { locationCode: string }) => d.locationCode === `${root}-x`));

    // A rule the database enforces, broken deep in the tree: the answer names the node.
    const unknownParent = randomUUID();
    const orphan = await admin('POST', '/dealers/import', {
      dealers: [{ locationCode: unique('NEW') }, { locationCode: `${root}-y`, parentId: unknownParent }],
    });
    assert.equal(orphan.status, 422, orphan.text);
    assert.equal(orphan.body.error.code, 'VALIDATION_FAILED');
    assert.equal(orphan.body.error.message, `dealers.1 (${root}-y): parentId: no dealer profile has this id`);

    // 10,000 profiles at most, at every level together (each level alone could hold 10,000).
    const wide = unique('WIDE');
    const tooMany = await admin('POST', '/dealers/import', {
      dealers: [
        {
          locationCode: wide,
          children: Array.from({ length: 6_000 }, (_, i) => ({ locationCode: `${wide}-${i}` })),
        },
        ...Array.from({ length: 4_001 }, (_, i) => ({ locationCode: `${wide}-top-${i}` })),
      ],
    });
    assert.equal(tooMany.status, 422, tooMany.text);
    assert.match(tooMany.body.error.message, /at most 10000 profiles in one import \(this has 10002\)/);
    const after = await admin('GET', '/dealers');
    assert.ok(
      !after.body.data.some((d: { locationCode: string }) => d.locationCode.startsWith(wide)),
      'nothing of it was imported',
    );
  });

  test('dealers import: a profile already there keeps its parent unless the file names one', async () => {
    // Found by review (2026-11-30): re-importing a location to change its phone moved it to the
    // top level, out of every partner's scope that reached it through its group.
    const root = unique('KEEP');
    await admin('POST', '/dealers/import', {
      dealers: [{ locationCode: root, children: [{ locationCode: `${root}-1` }] }],
    });
    const byCode = async (code: string) =>
      (await admin('GET', '/dealers')).body.data.find(
        (d: { locationCode: string }) => d.locationCode === code,
      );
    const group = await byCode(root);
    const phone = await admin('POST', '/dealers/import', {
      dealers: [{ locationCode: `${root}-1`, phone: '+32 9 123 45 67' }],
    });
    assert.equal(phone.status, 200, phone.text);
    assert.deepEqual([phone.body.data.updated, phone.body.data.unchanged], [1, 0]);
    const child = await byCode(`${root}-1`);
    assert.equal(child.parentId, group.id);
    assert.equal(child.phone, '+32 9 123 45 67');
    // Named, the parent is taken: null is the top level.
    const top = await admin('POST', '/dealers/import', {
      dealers: [{ locationCode: `${root}-1`, parentId: null }],
    });
    assert.equal(top.status, 200, top.text);
    assert.equal((await byCode(`${root}-1`)).parentId, null);
    // A nested node naming another parent than the one it is nested under says two things.
    const other = unique('OTHER');
    await admin('POST', '/dealers', { locationCode: other });
    const both = await admin('POST', '/dealers/import', {
      dealers: [{ locationCode: root, children: [{ locationCode: `${root}-1`, parentLocationCode: other }] }],
    });
    assert.equal(both.status, 422, both.text);
    assert.equal(both.body.error.issues[0].path, 'dealers.0.children.0.parentLocationCode');
    assert.equal((await byCode(`${root}-1`)).parentId, null, 'nothing of the refused import landed');
    // Naming the same parent it is nested under is no contradiction.
    const same = await admin('POST', '/dealers/import', {
      dealers: [{ locationCode: root, children: [{ locationCode: `${root}-1`, parentLocationCode: root }] }],
    });
    assert.equal(same.status, 200, same.text);
    assert.equal((await byCode(`${root}-1`)).parentId, group.id);
  });

  test('partners: secret shown once, never in reads; default scopes; unknown root profile is 422', async () => {
    const tree = await createTree(app);
    const created = await admin('POST', '/partners', {
      name: 'Feed One',
      access: { scope: 'restricted', rootProfileIds: [tree.ids.A] },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.data.secret, /^fc_[0-9A-Za-z]{46}$/);
    assert.deepEqual(created.body.data.scopes, ['read:listings', 'read:locations']);
    assert.equal(created.headers['cache-control'], 'no-store');

    const read = await admin('GET', `/partners/${created.body.data.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.secret, undefined);
    assert.ok(!read.text.includes(created.body.data.secret));
    const list = await admin('GET', '/partners');
    assert.ok(!list.text.includes('fc_'));

    const bad = await admin('POST', '/partners', {
      name: 'Ghost',
      access: { scope: 'restricted', rootProfileIds: ['00000000-0000-4000-8000-000000000000'] },
    });
    assert.equal(bad.status, 422);
    const badScope = await admin('POST', '/partners', {
      name: 'X',
      scopes: ['admin'],
      access: { scope: 'global' },
    });
    assert.equal(badScope.status, 422);
  });

  test('partners: update scopes, access, rate limit and disabled flag; unknown id is 404', async () => {
    const tree = await createTree(app);
    const partner = await createPartner(app, { roots: [tree.ids.A!] });
    const patched = await admin('PATCH', `/partners/${partner.id}`, {
      scopes: ['read:listings', 'write:listings'],
      access: { scope: 'global' },
      rateLimitPerMinute: 1200,
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.data.access, { scope: 'global' });
    assert.equal(patched.body.data.rateLimitPerMinute, 1200);
    assert.deepEqual(patched.body.data.scopes, ['read:listings', 'write:listings']);
    const missing = await admin('PATCH', '/partners/00000000-0000-4000-8000-000000000000', {
      disabled: true,
    });
    assert.equal(missing.status, 404);
    const fresh = await createPartner(app, { roots: [tree.ids.A!] });
    const lastUsed = await admin('GET', `/partners/${fresh.id}`);
    assert.equal(lastUsed.body.data.lastUsedAt, null);
    await app.call('GET', '/api/external/v1/listings', { secret: fresh.secret });
    const used = await admin('GET', `/partners/${fresh.id}`);
    assert.ok(Date.parse(used.body.data.lastUsedAt) > Date.now() - 60_000);
  });
});
