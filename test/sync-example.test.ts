import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { bootApp, createPartner, createTree, listingBody, type TestApp } from './helpers/app.js';

// docs/sync.md shows examples/sync-loop.ts as the way to sync: this runs it, unchanged, as a
// separate process against the real service, so the documented loop stays one that works.
// Long enough for a 100-listing bulk on the embedded database when other test files share the cores.
const WRITE_TX_TIMEOUT_MS = 1000;
const run = promisify(execFile);

let app: TestApp;
before(async () => {
  app = await bootApp({ WRITE_TX_TIMEOUT_MS: String(WRITE_TX_TIMEOUT_MS) });
});
after(() => app.close());

test('the documented sync loop: a full sync, then only the changes, sold listings included', async () => {
  const tree = await createTree(app);
  const partner = await createPartner(app, {
    roots: [tree.ids.B!],
    scopes: ['read:listings', 'write:listings'],
  });
  const items = Array.from({ length: 450 }, (_, i) => ({ externalReference: `EX-${i}`, ...listingBody() }));
  for (let i = 0; i < items.length; i += 100) {
    const r = await app.call('POST', '/api/external/v1/listings/bulk-upsert', {
      secret: partner.secret,
      body: items.slice(i, i + 100),
    });
    assert.equal(r.body?.data?.successCount, Math.min(100, items.length - i), r.text);
  }
  await sleep(2 * WRITE_TX_TIMEOUT_MS + 100);

  const stateFile = path.join(app.dataDir, 'sync-state.json');
  const sync = async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/sync-loop.ts', '--once'], {
      env: {
        ...process.env,
        BASE: `${app.url}/api/external/v1`,
        SECRET: partner.secret,
        STATE_FILE: stateFile,
        NODE_EXTRA_CA_CERTS: path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
      },
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!);
  };

  const first = await sync();
  assert.deepEqual([first.changed, first.listings, first.active], [450, 450, 450]);

  await app.call('DELETE', '/api/external/v1/listings/EX-7', { secret: partner.secret });
  await app.call('PUT', '/api/external/v1/listings/EX-8', {
    secret: partner.secret,
    body: listingBody({ price: 1234 }),
  });
  await sleep(2 * WRITE_TX_TIMEOUT_MS + 100);

  const second = await sync();
  assert.deepEqual([second.changed, second.listings, second.active], [2, 450, 449]);
  const copy = JSON.parse(readFileSync(stateFile, 'utf8')).listings;
  const byRef = (ref: string) => Object.values<any>(copy).find((l) => l.externalReference === ref);
  assert.equal(byRef('EX-7').status, 'sold');
  assert.equal(byRef('EX-8').price, 1234);

  const third = await sync();
  assert.equal(third.changed, 0, 'nothing changed, nothing fetched again');
});

test('without STATE_FILE the loop keeps its state in the temporary directory, not the folder it runs from', async () => {
  const tree = await createTree(app);
  const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ['read:listings'] });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'forecourt-sync-tmp-'));
  const cwd = path.resolve(import.meta.dirname, '..');
  const inCwd = path.join(cwd, 'forecourt-sync.json');
  const existed = existsSync(inCwd);
  try {
    const { stderr } = await run(process.execPath, ['--import', 'tsx', 'examples/sync-loop.ts', '--once'], {
      cwd,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'STATE_FILE')),
        TMPDIR: tmp,
        BASE: `${app.url}/api/external/v1`,
        SECRET: partner.secret,
        NODE_EXTRA_CA_CERTS: path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
      },
    });
    assert.ok(existsSync(path.join(tmp, 'forecourt-sync.json')), 'the state is in the temporary directory');
    assert.equal(existsSync(inCwd), existed, 'nothing written into the repository');
    assert.match(stderr, new RegExp(`state: ${path.join(tmp, 'forecourt-sync.json')}`));
  } finally {
    if (!existed) rmSync(inCwd, { force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
});
