import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { ALL_SCOPES, bootApp, createPartner, createTree, type TestApp } from './helpers/app.js';

// A partner's first hour with @forecourt/client, as they would live it: the package packed the
// way npm publishes it, installed from the tarball into an empty project (no workspace, no
// TypeScript, no server packages), used from a plain .mjs script and through its `forecourt
// import` command, and type-checked from TypeScript, all against the real service.
const run = promisify(execFile);
// The checkout itself: npm packs the workspace from there, not from the test run's compiled copy
// (scripts/test-tree.mjs), whose package.json is a link to the checkout's.
const ROOT = path.dirname(realpathSync(path.resolve(import.meta.dirname, '..', 'package.json')));
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_PACKAGES = 15;

let app: TestApp;
let project: string;
let work: string;
before(async () => {
  app = await bootApp();
  work = mkdtempSync(path.join(tmpdir(), 'forecourt-client-package-'));
  // The compiled package (dist/) is what gets packed: `npm test` builds it first (pretest).
  const { stdout } = await run(
    'npm',
    ['pack', '--json', '--pack-destination', work, '-w', '@forecourt/client'],
    {
      cwd: ROOT,
    },
  );
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  project = path.join(work, 'partner-project');
  await run('mkdir', ['-p', project]);
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'partner-project', private: true }),
  );
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-package-lock', path.join(work, packed!.filename)],
    {
      cwd: project,
    },
  );
});
after(async () => {
  await app?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Every installed package (scoped and nested ones too), and the bytes of the whole tree. */
function installed(dir: string): { packages: string[]; bytes: number } {
  const packages: string[] = [];
  let bytes = 0;
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (
          path.basename(folder) === 'node_modules' &&
          !entry.name.startsWith('.') &&
          !entry.name.startsWith('@')
        ) {
          packages.push(path.relative(dir, full));
        }
        if (path.basename(folder).startsWith('@') && path.basename(path.dirname(folder)) === 'node_modules') {
          packages.push(path.relative(dir, full));
        }
        walk(full);
      } else {
        bytes += statSync(full).size;
      }
    }
  };
  walk(dir);
  return { packages, bytes };
}

const partnerEnv = (secret: string) => ({
  ...process.env,
  FORECOURT_URL: app.url,
  FORECOURT_SECRET: secret,
  FORECOURT_CA: path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
});

test(`the installed client is under ${MAX_PACKAGES} packages and 5 MB, with no server package in it`, () => {
  const { packages, bytes } = installed(path.join(project, 'node_modules'));
  assert.ok(packages.includes('@forecourt/client'), packages.join(', '));
  assert.ok(packages.length <= MAX_PACKAGES, `${packages.length} packages: ${packages.join(', ')}`);
  assert.ok(bytes < MAX_BYTES, `${(bytes / 1024 / 1024).toFixed(2)} MB`);
  for (const server of ['fastify', '@electric-sql/pglite', 'pg', 'redis', 'zod', 'tsx']) {
    assert.ok(
      !packages.some((p) => p.endsWith(`node_modules/${server}`) || p === server),
      `${server} installed`,
    );
  }
  const manifest = JSON.parse(
    readFileSync(path.join(project, 'node_modules/@forecourt/client/package.json'), 'utf8'),
  );
  assert.equal(manifest.name, '@forecourt/client');
  const shipped = readdirSync(path.join(project, 'node_modules/@forecourt/client/dist'));
  assert.ok(shipped.includes('index.js') && shipped.includes('index.d.ts'), shipped.join(', '));
  assert.ok(
    !shipped.some((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
    'TypeScript sources shipped',
  );
});

test('a plain .mjs script writes and reads listings with the installed client', async () => {
  const tree = await createTree(app);
  const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
  writeFileSync(
    path.join(project, 'partner.mjs'),
    `import { readFileSync } from 'node:fs';
import { createClient, ForecourtError } from '@forecourt/client';

const forecourt = createClient({
  baseUrl: process.env.FORECOURT_URL,
  secret: process.env.FORECOURT_SECRET,
  ca: readFileSync(process.env.FORECOURT_CA),
});
const [location] = (await forecourt.locations.list()).data;
const report = await forecourt.listings.upsertMany([
  { externalReference: 'PKG-1', dealerLocationCode: location.locationCode, title: 'Skoda Octavia', price: 18950, currency: 'EUR', status: 'active' },
  { externalReference: 'PKG-2', dealerLocationCode: location.locationCode, title: 'Kia Ceed', price: 'cheap' },
]);
const listed = [];
for await (const listing of forecourt.listings.iterate()) listed.push(listing.externalReference);
let notFound;
try {
  await forecourt.listings.get('00000000-0000-4000-8000-000000000000');
} catch (error) {
  notFound = error instanceof ForecourtError ? error.code : String(error);
}
const failed = report.items.filter((item) => !item.ok).map((item) => item.issues[0].path);
console.log(JSON.stringify({ created: report.created, failed, listed, notFound }));
`,
  );
  const { stdout } = await run(process.execPath, ['partner.mjs'], {
    cwd: project,
    env: partnerEnv(partner.secret),
  });
  assert.deepEqual(JSON.parse(stdout), {
    created: 1,
    failed: ['price'],
    listed: ['PKG-1'],
    notFound: 'NOT_FOUND',
  });
});

test('`forecourt import` comes with the package: a CSV feed uploaded from the empty project', async () => {
  const tree = await createTree(app);
  const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
  const locations = await app.call('GET', '/api/external/v1/locations', { secret: partner.secret });
  const code = locations.body.data[0].locationCode;
  writeFileSync(
    path.join(project, 'feed.csv'),
    `externalReference;title;price;currency;status;dealerLocationCode\nFEED-1;VW Golf;15950;EUR;active;${code}\n`,
  );
  const { stdout } = await run(
    process.execPath,
    [
      'node_modules/.bin/forecourt',
      'import',
      'feed.csv',
      '--url',
      app.url,
      '--secret',
      partner.secret,
      '--ca',
      partnerEnv('').FORECOURT_CA,
    ],
    { cwd: project },
  );
  assert.match(stdout, /FEED|1/);
  const listings = await app.call('GET', '/api/external/v1/listings', { secret: partner.secret });
  const imported = listings.body.data.filter(
    (l: { externalReference: string }) => l.externalReference === 'FEED-1',
  );
  assert.equal(imported.length, 1, JSON.stringify(listings.body.data));
  assert.equal(imported[0].price, 15950);
});

test('TypeScript sees the package types: a wrong call fails to compile, a right one passes', async () => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const options = [
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--skipLibCheck',
  ];
  writeFileSync(
    path.join(project, 'good.mts'),
    `import { createClient, type Listing } from '@forecourt/client';
const forecourt = createClient({ baseUrl: 'https://example.test', secret: 'fc_x' });
export const titles = async (): Promise<string[]> => (await forecourt.listings.list({ pageSize: 10 })).data.map((l: Listing) => l.title);
`,
  );
  await run(process.execPath, [tsc, ...options, 'good.mts'], { cwd: project });
  writeFileSync(
    path.join(project, 'bad.mts'),
    `import { createClient } from '@forecourt/client';
const forecourt = createClient({ baseUrl: 'https://example.test', secret: 'fc_x' });
export const page = forecourt.listings.list({ pageSize: 'ten' });
export const typo = forecourt.listings.list({ status: 'actve' });
`,
  );
  const failed = await run(process.execPath, [tsc, ...options, 'bad.mts'], { cwd: project }).then(
    () => undefined,
    (error: { stdout: string }) => error.stdout,
  );
  assert.match(failed ?? 'compiled', /bad\.mts.*pageSize|Type 'string' is not assignable to type 'number'/s);
  assert.match(failed ?? 'compiled', /bad\.mts\(4,.*"actve"/s, 'a misspelt status filter does not compile');
});

/** A fenced block of docs/client.md: the first one with this info string whose text matches. */
function clientDoc(info: string, matching: RegExp): string {
  const page = readFileSync(path.join(ROOT, 'docs/client.md'), 'utf8');
  const blocks = [...page.matchAll(new RegExp(`^\`\`\`${info}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (m) => m[1]!,
  );
  const block = blocks.find((b) => matching.test(b));
  assert.ok(block, `docs/client.md has no ${info} block matching ${matching}`);
  return block;
}

test("docs/client.md's first script mirrors the whole stock: a sold listing reaches the copy", async () => {
  const tree = await createTree(app);
  const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
  const code = (await app.call('GET', '/api/external/v1/locations', { secret: partner.secret })).body.data[0]
    .locationCode;
  for (const ref of ['DOC-ACTIVE', 'DOC-SOLD']) {
    const put = await app.call('PUT', `/api/external/v1/listings/${ref}`, {
      secret: partner.secret,
      body: { title: ref, price: 9000, dealerLocationCode: code },
    });
    assert.equal(put.status, 201, put.text);
  }
  await app.call('DELETE', '/api/external/v1/listings/DOC-SOLD', { secret: partner.secret });
  writeFileSync(path.join(project, 'sync.mjs'), clientDoc('js', /^\/\/ sync\.mjs/));
  const { stdout } = await run(process.execPath, ['sync.mjs'], {
    cwd: project,
    env: partnerEnv(partner.secret),
  });
  assert.match(stdout, /^DOC-ACTIVE active$/m);
  assert.match(stdout, /^DOC-SOLD sold$/m, 'iterate without status: all never sees a sold listing');
});

test('TypeScript as docs/client.md sets it up: @types/node and its tsconfig.json compile its sync.ts', async () => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const ts = path.join(work, 'ts-project');
  await run('mkdir', ['-p', ts]);
  await run('cp', ['-r', path.join(project, 'node_modules'), path.join(ts, 'node_modules')]);
  // The partner's project as it is after `npm install <the client's package file>` (same folder level,
  // so its file: dependency resolves alike), then the page's steps.
  await run('cp', [path.join(project, 'package.json'), path.join(ts, 'package.json')]);
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: ts });
  writeFileSync(path.join(ts, 'tsconfig.json'), clientDoc('json', /"moduleResolution": "nodenext"/));
  writeFileSync(path.join(ts, 'sync.ts'), clientDoc('typescript', /@forecourt\/client/));
  const compile = () =>
    run(process.execPath, [tsc, '-p', '.'], { cwd: ts }).then(
      () => 'compiled',
      (error: { stdout: string }) => error.stdout,
    );
  // What the page says happens without @types/node.
  assert.match(
    await compile(),
    /Cannot find (module 'node:fs'|name 'process')|Cannot find type definition file for 'node'/,
  );
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-package-lock', '--save-dev', '@types/node@20'],
    {
      cwd: ts,
    },
  );
  assert.equal(await compile(), 'compiled');
  const { stdout } = await run(process.execPath, ['dist/sync.js'], {
    cwd: ts,
    env: partnerEnv((await createPartner(app, { roots: [(await createTree(app)).ids.B!] })).secret),
  });
  assert.match(stdout, /^\d+ listings$/m);
});
