import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type NewEvent, recordEvents } from '../src/store/events.js';
import {
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { baseEnv } from './helpers/base-env.js';
import { eventually } from './helpers/eventually.js';
import { putListing } from './helpers/listings-api.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * The events of the outbox read without an endpoint (GET /events) and forwarded by `forecourt
 * listen --events` to a local receiver as the service delivers them: one type a delivery, in
 * order, signed (verified with the `standardwebhooks` package), within the partner's scope.
 */
const BIN = path.resolve(import.meta.dirname, '../packages/client/dist/bin.js');
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SCOPES = ['read:listings', 'write:listings'];

let app: TestApp;
let tree: Tree;
let mine: { id: string; secret: string };
let theirs: { id: string; secret: string };
let receiver: Receiver;
let listener: ChildProcess | undefined;
let output = '';

before(async () => {
  app = await bootApp();
  tree = await createTree(app);
  mine = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
  theirs = await createPartner(app, { roots: [tree.ids.B!], scopes: SCOPES });
  receiver = await startReceiver();
  receiver.secrets.push(WEBHOOK_SECRET);
});
after(async () => {
  if (listener && listener.exitCode === null) listener.kill('SIGKILL');
  await receiver.close();
  await app.close();
});

const record = (rows: NewEvent[]) => app.running.db.transaction((tx) => recordEvents(tx, rows));
const checked = (listingId: string, n: number): NewEvent => ({
  type: 'listing.images_checked',
  listingId,
  data: { images: [{ url: `https://img.example/${n}.jpg`, from: 'pending', to: 'ok', problem: null }] },
});
const readiness = (listingId: string, live: boolean): NewEvent => ({
  type: 'listing.readiness_changed',
  listingId,
  data: { from: { live: !live, reasons: [] }, to: { live, reasons: [] } },
});

test('GET /events: the scope’s events in order, cursor paged, types checked', async () => {
  const a = await putListing(app, mine.secret, 'LE-A', listingBody({ dealerProfileId: tree.ids.A1 }));
  const b = await putListing(app, theirs.secret, 'LE-B', listingBody({ dealerProfileId: tree.ids.B }));
  for (let i = 0; i < 5; i++) await record([checked(a, i), readiness(a, i % 2 === 0), checked(b, i)]);
  const seen: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const reply = await app.call(
      'GET',
      `${EXT}/events?pageSize=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { secret: mine.secret },
    );
    assert.equal(reply.status, 200, reply.text);
    seen.push(...reply.body.data);
    cursor = reply.body.pagination.nextCursor;
    if (!reply.body.pagination.hasMore) break;
  }
  assert.equal(seen.length, 10);
  assert.ok(seen.every((e) => e.listingId === a && e.externalReference === 'LE-A'));
  assert.deepEqual(
    seen.map((e) => e.type),
    Array.from({ length: 5 }, () => ['listing.images_checked', 'listing.readiness_changed']).flat(),
  );
  // A cursor is bound to its types; an unknown type is named.
  const other = await app.call(
    'GET',
    `${EXT}/events?types=listing.images_checked&cursor=${encodeURIComponent(cursor!)}`,
    {
      secret: mine.secret,
    },
  );
  assert.equal(other.status, 400, other.text);
  const unknown = await app.call('GET', `${EXT}/events?types=listing.sold`, { secret: mine.secret });
  assert.equal(unknown.status, 400, unknown.text);
  assert.match(unknown.text, /listing\.images_checked, listing\.readiness_changed/);
  // `since` is read as every query's date-time: year 0000 was a 500 on PostgreSQL (fuzzer).
  for (const since of ['0000-02-29T23:20:26Z', '2021-02-30', 'yesterday']) {
    const bad = await app.call('GET', `${EXT}/events?since=${since}`, { secret: mine.secret });
    assert.equal(bad.status, 400, `${since}: ${bad.text}`);
    assert.equal(bad.body.error.code, 'INVALID_QUERY');
    assert.match(bad.text, /since/);
  }
  const later = await app.call('GET', `${EXT}/events?since=2999-01-01`, { secret: mine.secret });
  assert.equal(later.status, 200, later.text);
  assert.deepEqual(later.body.data, [], 'nothing after a future instant');
  const earlier = await app.call('GET', `${EXT}/events?since=2000-01-01 00:00`, { secret: mine.secret });
  assert.equal(earlier.status, 200, earlier.text);
  assert.ok(earlier.body.data.length > 0, 'a date-time with a space for the T is read');
});

test('forecourt listen --events forwards them as the service delivers them', async () => {
  const a = await putListing(app, mine.secret, 'LE-C', listingBody({ dealerProfileId: tree.ids.A }));
  listener = spawn(
    process.execPath,
    [
      BIN,
      'listen',
      '--forward-to',
      receiver.url,
      '--url',
      app.url,
      '--ca',
      path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
      '--webhook-secret',
      WEBHOOK_SECRET,
      '--events',
      'listing.images_checked,listing.readiness_changed',
      '--interval-ms',
      '100',
    ],
    { env: { ...baseEnv(), FORECOURT_SECRET: mine.secret }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  listener.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  listener.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  await eventually(
    () => output.includes('listening'),
    () => output,
  );
  receiver.script.push(500);
  const expected: NewEvent[] = [];
  for (let i = 0; i < 6; i++) {
    const rows = [checked(a, 100 + i), checked(a, 200 + i), readiness(a, i % 2 === 0)];
    await record(rows);
    expected.push(...rows);
  }
  const applied = () => {
    const ids = new Set<string>();
    const out: any[] = [];
    for (const r of receiver.requests) {
      if (r.answered !== 200 || ids.has(r.id)) continue;
      ids.add(r.id);
      const body = JSON.parse(r.raw.body);
      for (const e of body.data) out.push({ type: body.type, ...e });
    }
    return out.filter((e) => e.listingId === a);
  };
  await eventually(
    () => applied().length >= expected.length,
    () => `${applied().length} events; listen said:\n${output}`,
  );
  assert.deepEqual(receiver.problems, []);
  assert.deepEqual(
    applied().map((e) => [e.type, e.type === 'listing.images_checked' ? e.images[0].url : e.to.live]),
    expected.map((e: any) => [
      e.type,
      e.type === 'listing.images_checked' ? e.data.images[0].url : e.data.to.live,
    ]),
  );
  assert.ok(receiver.requests.every((r) => r.type !== 'listings.changed'));
  assert.match(output, /listing\.images_checked: \d+ event\(s\) delivered/);
});
