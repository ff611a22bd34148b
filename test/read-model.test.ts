import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { readModelFunctionsSql } from '../src/store/listings/json.js';
import { loadMigrations, migrate } from '../src/store/migrate.js';
import { openDb } from '../src/store/open.js';
import { readModelStore } from '../src/store/read-model.js';
import {
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { bulkUpsert, putListing, remove, setStatusOk } from './helpers/listings-api.js';
import { freshDatabase, serverUrl } from './helpers/postgres.js';
import { assertCompact, assertReadModel } from './helpers/read-model.js';

/**
 * The read model (migration 011): every listing's and dealer's read JSON is kept as text with the
 * row and pages splice it. After every kind of write (each partner write, each operator change of
 * a dealer or partner, a plain UPDATE as tests and migrations do, the migration's own backfill)
 * the stored text must equal the text built fresh from the columns, and every answer is compact.
 * On the embedded database, and on PostgreSQL when DATABASE_URL is set.
 */
let app: TestApp;
let tree: Tree;
let partner: { id: string; secret: string };

before(async () => {
  app = await bootApp();
  tree = await createTree(app);
  await app.admin('PATCH', `/dealers/${tree.ids.A1}`, {
    metadata: { crm: 'x"y\\z', nested: { b: [1, 2.5, null], a: true } },
  });
  partner = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: ['read:listings', 'read:locations', 'write:listings'],
  });
});
after(() => app?.close());

const db = () => app.running.db;
const rich = (overrides: Record<string, unknown> = {}) =>
  listingBody({
    description: 'Quote " backslash \\ newline \n ü 🚗',
    fuelConsumption: 0.01,
    latitude: 1e-7,
    longitude: -179.123456789,
    firstRegistration: '2019-03',
    images: ['https://img.example/1.jpg', 'https://img.example/2.jpg?a=1&b="2"'],
    features: ['Navigation', { category: 'safety', name: 'Parking camera' }],
    conditionTags: ['used'],
    historyReportUrl: 'https://www.car-pass.be/en/report/12345678901',
    ...overrides,
  });

/** Every partner write path, each followed by the comparison; references start with `p`. */
async function partnerWrites(p: string) {
  const { secret } = partner;
  await putListing(app, secret, `${p}1`, rich({ dealerLocationCode: tree.codes.A1 }));
  await putListing(
    app,
    secret,
    `${p}2`,
    rich({ dealerLocationCode: tree.codes.A2, status: 'draft', price: null }),
  );
  await putListing(app, secret, `${p}3`, listingBody({ dealerLocationCode: tree.codes.A1a }));
  await assertReadModel(db(), 'PUT (created)');

  await putListing(
    app,
    secret,
    `${p}1`,
    rich({ dealerLocationCode: tree.codes.A1a, images: [], features: [], price: 1234.5 }),
  );
  await assertReadModel(db(), 'PUT (updated, dealer moved, images and features emptied)');

  const patched = await app.call('PATCH', `${EXT}/listings/${p}3`, {
    secret,
    headers: { 'content-type': 'application/merge-patch+json' },
    raw: JSON.stringify({ title: 'Patched', description: null, images: ['https://img.example/p.jpg'] }),
  });
  assert.equal(patched.status, 200, patched.text);
  await assertReadModel(db(), 'PATCH');

  const reply = await bulkUpsert(app, secret, [
    { externalReference: `${p}4`, ...rich({ dealerLocationCode: tree.codes.A }) },
    { externalReference: `${p}5`, ...listingBody({ dealerLocationCode: tree.codes.A2, status: 'pending' }) },
    { externalReference: `${p}2`, ...rich({ dealerLocationCode: tree.codes.A2, title: 'Bulk update' }) },
  ]);
  assert.deepEqual(Object.keys(reply).sort(), [`${p}2`, `${p}4`, `${p}5`]);
  await assertReadModel(db(), 'bulk upsert');

  await setStatusOk(app, secret, `${p}4`, 'sold');
  await assertReadModel(db(), 'status → sold (soldAt)');
  await setStatusOk(app, secret, `${p}4`, 'active');
  await assertReadModel(db(), 'status → active (soldAt cleared)');

  assert.equal((await remove(app, secret, `${p}5`)).status, 200);
  await assertReadModel(db(), 'DELETE (mark sold)');
}

/** The listing triggers off for `fn` (they take an exclusive lock: nothing else runs meanwhile). */
async function withoutListingTriggers(fn: () => Promise<void>) {
  const triggers = ['listings_read_json_insert', 'listings_read_json_update'];
  for (const t of triggers) await db().query('TestDisable', `ALTER TABLE listings DISABLE TRIGGER ${t}`);
  try {
    await fn();
  } finally {
    for (const t of triggers) await db().query('TestEnable', `ALTER TABLE listings ENABLE TRIGGER ${t}`);
  }
}

test('every partner write keeps the stored JSON equal to a fresh build', async () => {
  await partnerWrites('rm-');
});

// The store writes the text in the statement that writes the row (cheaper than the trigger, which
// only fills in for plain SQL): with the triggers off, every write path must still store it right,
// or a path that stopped writing it would go unnoticed behind the trigger's back.
test('every partner write stores the text itself, without the triggers', async () => {
  await withoutListingTriggers(() => partnerWrites('rw-'));
});

test('every operator change of a dealer or a partner keeps the stored JSON right, children included', async () => {
  const { secret } = partner;
  const created = await app.admin('POST', '/dealers', {
    locationCode: `rm-new-${process.pid}`,
    parentId: tree.ids.A,
    displayName: 'New location',
    metadata: { tier: 'gold', opening: { mon: '9-18' } },
  });
  await putListing(app, secret, 'rm-6', rich({ dealerProfileId: created.id }));
  await assertReadModel(db(), 'dealer created');

  // A's name is in the parent summary of A1, A2 and the new location.
  await app.admin('PATCH', `/dealers/${tree.ids.A}`, {
    displayName: 'Alpha renamed',
    companyName: 'Alpha NV',
  });
  await assertReadModel(db(), 'parent dealer renamed');
  const children = await db().query<{ read_json: string }>(
    'TestChildren',
    'SELECT read_json FROM dealer_profiles WHERE parent_id = $1',
    [tree.ids.A],
  );
  assert.ok(children.length >= 3);
  for (const c of children) assert.match(c.read_json, /"parent":\{[^}]*"displayName":"Alpha renamed"\}/);

  await app.admin('PATCH', `/dealers/${tree.ids.A1a}`, { parentId: tree.ids.A2, email: 'a1a@example.test' });
  await assertReadModel(db(), 'dealer moved to another parent');
  await app.admin('PATCH', `/dealers/${tree.ids.A1}`, { metadata: {} });
  await assertReadModel(db(), 'dealer metadata cleared');

  const renamed = `Renamed partner ${process.pid}`;
  await app.admin('PATCH', `/partners/${partner.id}`, { name: renamed });
  await assertReadModel(db(), 'partner renamed');
  const page = await app.call('GET', `${EXT}/listings?status=all`, { secret });
  assert.ok(page.body.data.every((l: { externalProvider: string }) => l.externalProvider === renamed));
});

test('plain SQL writes (as tests, benchmarks and migrations do) are kept too', async () => {
  await db().query(
    'TestPlainUpdate',
    `UPDATE listings SET price = price + 1, mileage = 7, updated_at = next_updated_at(updated_at) WHERE price IS NOT NULL`,
  );
  await db().query('TestPlainDealer', `UPDATE dealer_profiles SET city = 'Brugge' WHERE id = $1`, [
    tree.ids.A2,
  ]);
  await assertReadModel(db(), 'plain UPDATE');
});

test('every answer is compact JSON: pages, a single listing, locations', async () => {
  const { secret } = partner;
  const page = await app.call('GET', `${EXT}/listings?status=all`, { secret });
  assert.equal(page.status, 200);
  assertCompact(page.text, 'page');
  const single = await app.call('GET', `${EXT}/listings/${page.body.data[0].id}`, { secret });
  assertCompact(single.text, 'single listing');
  const locations = await app.call('GET', `${EXT}/locations?includeChildren=true`, { secret });
  assertCompact(locations.text, 'locations');
  const ofLocation = await app.call('GET', `${EXT}/locations/${tree.ids.A1a}/listings?status=all`, {
    secret,
  });
  assertCompact(ofLocation.text, 'location listings');
});

test('the check finds drift that went around the triggers, and --repair rewrites it', async () => {
  const check = readModelStore(db());
  const [victim] = await db().query<{ id: string }>(
    'TestVictim',
    'SELECT id FROM listings ORDER BY id LIMIT 1',
  );
  await withoutListingTriggers(async () => {
    await db().query('TestCorrupt', `UPDATE listings SET title = 'Changed behind its back' WHERE id = $1`, [
      victim!.id,
    ]);
  });
  await db().query('TestCorruptDealer', `UPDATE dealer_profiles SET read_json = '{}' WHERE id = $1`, [
    tree.ids.B,
  ]);
  // That plain UPDATE went through the trigger, which rewrote the text: only the listing drifted.
  let drift = await check.check();
  assert.deepEqual(drift.driftedListings, [victim!.id]);
  assert.deepEqual(drift.driftedDealers, []);
  drift = await check.check({ repair: true });
  assert.deepEqual([drift.driftedListings, drift.unrepaired], [[victim!.id], []]);
  await assertReadModel(db(), 'after repair');
});

test('the database runs the trigger functions the read shape generates (migration 016 over 011)', async () => {
  const generated = [
    ...readModelFunctionsSql().matchAll(
      /FUNCTION (\w+)\(\) RETURNS trigger LANGUAGE plpgsql AS \$\$(.*?)\$\$;/gs,
    ),
  ].map(([, name, body]) => ({ name, body }));
  assert.deepEqual(
    generated.map((f) => f.name),
    ['dealer_profiles_read_json', 'listings_read_json'],
  );
  const installed = await db().query<{ name: string; body: string }>(
    'TestReadModelFunctions',
    `SELECT proname AS name, prosrc AS body FROM pg_proc
     WHERE proname IN ('dealer_profiles_read_json', 'listings_read_json') ORDER BY proname`,
  );
  assert.deepEqual(installed, generated);
});

test('migration 011 builds the text for rows written before it, and `forecourt check read-model` reports and repairs', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-rm-'));
  const pgDb = serverUrl ? await freshDatabase() : undefined;
  const options = {
    databaseUrl: pgDb?.url,
    dataDir,
    statementTimeoutMs: 30_000,
    connectTimeoutMs: 10_000,
    poolSize: 1,
  };
  try {
    let fresh = await openDb(options);
    const all = loadMigrations();
    await migrate(
      fresh,
      all.filter((m) => m.version < 11),
    );
    await fresh.exec(
      'TestOldRows',
      `INSERT INTO dealer_profiles (id, location_code, display_name, metadata)
         VALUES ('00000000-0000-4000-8000-000000000001', 'old-root', 'Old root', '{"a": [1, {"b": "c d"}]}');
       INSERT INTO dealer_profiles (id, parent_id, location_code, city)
         VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'old-child', 'Gent');
       INSERT INTO partners (id, name, scopes, access_scope) VALUES ('00000000-0000-4000-8000-000000000003', 'Old', '{}', 'global');
       INSERT INTO listings (id, partner_id, external_reference, dealer_profile_id, slug, status, title, price, images, features, sold_at)
         VALUES ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000003', 'old-1',
                 '00000000-0000-4000-8000-000000000002', 'old-1-x', 'sold', 'Old " one', 10.5,
                 '["https://i.example/1.jpg"]', '[{"category": "other", "name": "Tow bar"}]', now());`,
    );
    await migrate(fresh, all);
    assert.equal(await assertReadModel(fresh, 'migration backfill'), 1);
    // Drift the listing behind the trigger's back, then let the command find and repair it.
    await fresh.exec(
      'TestDrift',
      `ALTER TABLE listings DISABLE TRIGGER listings_read_json_update;
       UPDATE listings SET read_json = ',"title":"stale"';
       ALTER TABLE listings ENABLE TRIGGER listings_read_json_update;`,
    );
    await fresh.close();
    const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: pgDb?.url ?? '', LOG_LEVEL: 'silent' };
    if (!pgDb) delete (env as Record<string, unknown>).DATABASE_URL;
    const cli = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'src/cli/bin.ts', 'check', 'read-model', ...args],
        { env },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );
    const found = await cli();
    assert.equal(found.code, 1, found.stdout);
    assert.match(found.stdout, /listings: 1 checked, 1 drifted: 00000000-0000-4000-8000-000000000004/);
    assert.match(found.stdout, /dealers: 2 checked, 0 drifted/);
    const repaired = await cli('--repair', '--json');
    assert.equal(repaired.code, 0, repaired.stdout);
    assert.deepEqual(JSON.parse(repaired.stdout).unrepaired, []);
    assert.equal((await cli()).code, 0);
    fresh = await openDb(options);
    await assertReadModel(fresh, 'after the command repaired');
    await fresh.close();
  } finally {
    await pgDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
