import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
// The package's own name: what a partner (and `forecourt import`) imports.
import {
  type BatchReport,
  createClient,
  type ForecourtClient,
  ForecourtError,
  type ListingInput,
  type WaitInfo,
} from '@forecourt/client';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  FIELDS_FILE,
  generateClientTypes,
  generateListingFields,
  TYPES_FILE,
} from '../scripts/openapi-client.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  movableClock,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { assertContract } from './helpers/contract.js';
import { startFlakyProxy } from './helpers/flaky-proxy.js';

/** A valid listing, typed as the client takes it (test/helpers' listingBody is untyped). */
const car = (overrides: Partial<ListingInput> = {}): ListingInput => ({
  title: 'Volkswagen Golf 1.5 TSI',
  price: 19950,
  brand: 'Volkswagen',
  model: 'Golf',
  year: 2021,
  ...overrides,
});

let app: TestApp;
// The rate-limit windows of the service under test: moved to a new minute instead of waited for.
const clock = movableClock();
let tree: Tree;
let ca: string;

/** A fetch for the client that checks every answer against docs/openapi.json, like app.call does. */
function contractFetch(input: string, init: RequestInit): Promise<Response> {
  return (async () => {
    const response = (await undiciFetch(input, {
      ...(init as object),
      dispatcher: app.dispatcher,
    })) as unknown as Response;
    const text = await response.clone().text();
    const url = new URL(input);
    assertContract(init.method ?? 'GET', `${url.pathname}${url.search}`, {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: text ? JSON.parse(text) : undefined,
      text,
    });
    return response;
  })();
}

function client(secret: string, options: Partial<Parameters<typeof createClient>[0]> = {}): ForecourtClient {
  return createClient({ baseUrl: app.url, secret, fetch: contractFetch, backoffMs: 20, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<ForecourtError> {
  const error = await promise.then(
    () => assert.fail('expected a ForecourtError'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ForecourtError, String(error));
  return error;
}

before(async () => {
  app = await bootApp({}, { clock });
  tree = await createTree(app);
  ca = readFileSync(path.join(app.dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
});
after(() => app.close());

test("the client package's generated files are what docs/openapi.json makes (else: npm run openapi:client)", async () => {
  assert.equal(readFileSync(TYPES_FILE, 'utf8'), await generateClientTypes());
  assert.equal(readFileSync(FIELDS_FILE, 'utf8'), generateListingFields());
});

test('patch, ETags and ifMatch: a write with a stale version is refused with 412 and the current ETag', async () => {
  // A tree of its own: the other tests count the listings of theirs.
  const own = await createTree(app);
  const partner = await createPartner(app, { roots: [own.ids.A!], scopes: ALL_SCOPES });
  const forecourt = client(partner.secret);
  const created = await forecourt.listings.put('CL-ETAG', car({ dealerProfileId: own.ids.A1, mileage: 10 }));
  const read = await forecourt.listings.getWithEtag(created.listingId);
  assert.equal(read.etag, created.etag, 'the write answers with the version a read gives');
  const patched = await forecourt.listings.patch(
    'CL-ETAG',
    { mileage: 20, variant: null },
    { ifMatch: read.etag },
  );
  assert.deepEqual([patched.outcome, patched.listingId], ['updated', created.listingId]);
  assert.notEqual(patched.etag, read.etag);
  assert.equal((await forecourt.listings.get(created.listingId)).mileage, 20);

  // Another writer's version came first: every write with the old ETag is refused.
  for (const stale of [
    () => forecourt.listings.put('CL-ETAG', car({ mileage: 30 }), { ifMatch: read.etag }),
    () => forecourt.listings.patch('CL-ETAG', { mileage: 30 }, { ifMatch: read.etag }),
    () => forecourt.listings.setStatus('CL-ETAG', 'pending', { ifMatch: read.etag }),
    () => forecourt.listings.remove('CL-ETAG', { ifMatch: read.etag }),
  ]) {
    const error = await rejection(stale());
    assert.deepEqual([error.status, error.code], [412, 'PRECONDITION_FAILED']);
  }
  const status = await forecourt.listings.setStatus('CL-ETAG', 'pending', { ifMatch: patched.etag });
  const sold = await forecourt.listings.markSold('CL-ETAG', { ifMatch: status.etag });
  assert.equal(sold.status, 'sold');
  assert.equal((await forecourt.listings.getWithEtag(created.listingId)).etag, sold.etag);
  const missing = await rejection(forecourt.listings.patch('CL-NONE', { mileage: 1 }));
  assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND']);
});

test('every endpoint, typed; errors carry status, code, message, requestId and issues', async () => {
  const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
  const forecourt = client(partner.secret);

  const enums = await forecourt.reference.enums();
  assert.ok(Object.keys(enums).includes('fuelType'), JSON.stringify(enums).slice(0, 200));

  const locations = await forecourt.locations.list();
  assert.deepEqual(
    locations.data.map((l) => l.locationCode).sort(),
    [tree.codes.A, tree.codes.A1, tree.codes.A1a, tree.codes.A2].sort(),
  );
  const a1 = await forecourt.locations.get(tree.ids.A1!);
  assert.equal(a1.locationCode, tree.codes.A1);
  const outside = await rejection(forecourt.locations.get(tree.ids.B!));
  assert.deepEqual([outside.status, outside.code], [404, 'NOT_FOUND']);

  const created = await forecourt.listings.put('CL-1', car({ dealerProfileId: tree.ids.A1 }));
  assert.deepEqual([created.created, created.outcome, created.externalReference], [true, 'created', 'CL-1']);
  const again = await forecourt.listings.put('CL-1', car({ dealerProfileId: tree.ids.A1 }));
  assert.equal(again.outcome, 'unchanged');
  const dry = await forecourt.listings.put('CL-1', car({ price: 1 }), { dryRun: true });
  // Typed as the dry run's answer (DryRunWriteResult): what it would do (issue 41).
  assert.deepEqual([dry.outcome, dry.dryRun, dry.created], ['would_update', true, false]);
  const listing = await forecourt.listings.get(created.listingId);
  assert.deepEqual([listing.price, listing.dealer.id], [19950, tree.ids.A1], 'the dry run wrote nothing');

  const paused = await forecourt.listings.setStatus('CL-1', 'pending');
  assert.deepEqual([paused.status, paused.listingId], ['pending', created.listingId]);
  const sold = await forecourt.listings.markSold('CL-1');
  assert.equal(sold.status, 'sold');
  assert.equal((await forecourt.listings.markSold('CL-1')).status, 'sold', 'idempotent');

  const bulk = await forecourt.listings.bulkUpsert([
    { externalReference: 'CL-2', ...car() },
    { externalReference: 'CL-3', ...car({ year: 1800 }) },
  ]);
  assert.deepEqual([bulk.successCount, bulk.errorCount, bulk.errors[0]?.index], [1, 1, 1]);

  const page = await forecourt.listings.list({ status: 'all', mine: true });
  assert.deepEqual(page.data.map((l) => l.externalReference).sort(), ['CL-1', 'CL-2']);
  const ofA1 = await forecourt.locations.listings(tree.ids.A1!, { status: 'all' });
  assert.deepEqual(
    ofA1.data.map((l) => l.id),
    [created.listingId],
  );

  // Errors: the envelope, whole.
  const invalid = await rejection(forecourt.listings.put('CL-4', car({ price: -5, vin: 'NOPE' })));
  assert.deepEqual([invalid.status, invalid.code], [422, 'VALIDATION_FAILED']);
  assert.deepEqual(invalid.issues?.map((i) => i.path).sort(), ['price', 'vin']);
  assert.match(invalid.requestId ?? '', /\S/);
  const own = await rejection(forecourt.listings.setStatus('NOT-MINE', 'sold', { requestId: 'trace-me-42' }));
  assert.deepEqual([own.status, own.code, own.requestId], [404, 'NOT_FOUND', 'trace-me-42']);
  const query = await rejection(forecourt.listings.list({ pageSize: 0 }));
  assert.deepEqual(
    [query.status, query.code, query.issues?.[0]?.path],
    [400, 'INVALID_QUERY', 'query.pageSize'],
  );
  const reader = await createPartner(app, { roots: [tree.ids.A!] });
  const scope = await rejection(client(reader.secret).listings.markSold('CL-1'));
  assert.deepEqual([scope.status, scope.code], [403, 'INSUFFICIENT_SCOPE']);
  const unknown = await rejection(client(`fc_${'x'.repeat(40)}`).listings.list());
  assert.deepEqual([unknown.status, unknown.code], [401, 'UNAUTHORIZED']);

  // Types come from the document: a status or a query the API does not have does not compile.
  // @ts-expect-error 'gone' is not a listing status
  await rejection(forecourt.listings.setStatus('CL-1', 'gone'));
  // @ts-expect-error pageSize is a number
  await rejection(forecourt.listings.list({ pageSize: 'many' }));
});

test('`ca` trusts the self-signed certificate; without it the request fails at once, saying how to trust it', async () => {
  const partner = await createPartner(app, { roots: [tree.ids.B!] });
  const page = await createClient({ baseUrl: app.url, secret: partner.secret, ca }).listings.list();
  assert.equal(page.meta.partner.id, partner.id);
  // Issue 29: an untrusted certificate was retried 5 times (5.9 s) like a network failure.
  const waits: WaitInfo[] = [];
  const started = Date.now();
  const untrusted = await rejection(
    createClient({
      baseUrl: app.url,
      secret: partner.secret,
      onWait: (w) => void waits.push(w),
    }).listings.list(),
  );
  assert.deepEqual([untrusted.status, untrusted.code], [0, 'TLS_CERTIFICATE_ERROR']);
  assert.deepEqual(waits, [], 'not retried');
  assert.ok(Date.now() - started < 1500, `${Date.now() - started} ms`);
  assert.match(
    untrusted.message,
    /certificate is not trusted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/,
  );
  assert.match(untrusted.message, /`ca` option of createClient, or `--ca FILE`/);
  // A host name the certificate is not for (it is issued for localhost) is refused at once too.
  const otherName = new Agent({ connect: { ca, servername: 'cars.example' } });
  const byAddress = await rejection(
    createClient({ baseUrl: app.url, secret: partner.secret, dispatcher: otherName }).listings.list(),
  );
  await otherName.close();
  assert.equal(byAddress.code, 'TLS_CERTIFICATE_ERROR', byAddress.message);
  assert.match(byAddress.message, /not for this host name/);
});

describe('upsertMany and iterate', () => {
  let forecourt: ForecourtClient;
  let items: ListingInput[];
  const failed = [7, 42, 120, 230];

  before(async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    forecourt = client(partner.secret);
    items = Array.from({ length: 250 }, (_, i) => ({
      externalReference: `UM-${i}`,
      ...car({ title: `Car ${i}`, dealerProfileId: tree.ids.A2 }),
    }));
    // The invalid ones, at known positions in different batches.
    items[7] = { ...items[7]!, title: '' };
    items[42] = { ...items[42]!, price: -5, vin: 'NOPE' };
    items[120] = car(); // no externalReference
    items[230] = { ...items[230]!, dealerProfileId: undefined, dealerLocationCode: 'NO-SUCH-LOCATION' };
    items[249] = { ...items[249]!, externalReference: 'UM-248' }; // a reference twice: the later item wins
  });

  const mine = async () =>
    (await forecourt.listings.list({ mine: true, status: 'all', pageSize: 1 })).pagination.totalItems;

  test('a dry run reports what would happen and writes nothing', async () => {
    const report = await forecourt.listings.upsertMany(items, { dryRun: true });
    assert.deepEqual(
      [report.dryRun, report.created, report.superseded, report.failed, report.batches],
      [true, 245, 1, 4, 3],
    );
    assert.equal(await mine(), 0);
  });

  test('250 listings in batches of 100: each item reported at its original index; onBatch awaited after each batch', async () => {
    const batches: BatchReport[] = [];
    const report = await forecourt.listings.upsertMany(items, {
      onBatch: async (batch) => {
        await sleep(100);
        // Nothing of the next batch may be written while the caller is still persisting this one.
        const done = batches.flatMap((b) => b.results).concat(batch.results);
        const written = new Set(
          done.filter((r) => r.ok && r.outcome === 'created').map((r) => r.externalReference),
        );
        assert.equal(await mine(), written.size, `after batch ${batch.batch}`);
        batches.push(batch);
      },
    });
    assert.deepEqual(
      batches.map((b) => [
        b.batch,
        b.batches,
        b.indices[0],
        b.indices.at(-1),
        b.results.length,
        b.requestIds.length,
      ]),
      [
        [0, 3, 0, 99, 100, 1],
        [1, 3, 100, 199, 100, 1],
        [2, 3, 200, 249, 50, 1],
      ],
    );
    for (const b of batches)
      assert.deepEqual(
        b.results.map((r) => r.index),
        b.indices,
      );
    assert.deepEqual(
      report.items.map((r) => r.index),
      items.map((_, i) => i),
    );
    assert.deepEqual(
      report.items.filter((r) => !r.ok).map((r) => r.index),
      failed,
    );
    const at = (i: number) => report.items[i]!;
    const failure = (i: number) => {
      const r = at(i);
      assert.ok(!r.ok);
      return r;
    };
    assert.deepEqual(
      [
        failure(7).code,
        failure(7).status,
        failure(7).externalReference,
        failure(7).issues?.map((i) => i.path),
      ],
      ['VALIDATION_FAILED', 422, 'UM-7', ['title']],
    );
    assert.deepEqual(
      failure(42)
        .issues?.map((i) => i.path)
        .sort(),
      ['price', 'vin'],
    );
    assert.deepEqual([failure(120).code, failure(120).externalReference], ['INVALID_REFERENCE', undefined]);
    assert.deepEqual([failure(230).status, failure(230).externalReference], [403, 'UM-230']);
    const superseded = at(248);
    assert.ok(superseded.ok);
    assert.deepEqual([superseded.outcome, superseded.supersededBy], ['superseded', 249]);
    assert.deepEqual(
      [report.created, report.updated, report.unchanged, report.superseded, report.failed],
      [245, 0, 0, 1, 4],
    );
    assert.equal(await mine(), 245);

    const resent = await forecourt.listings.upsertMany(items, { batchSize: 50 });
    assert.deepEqual([resent.batches, resent.unchanged, resent.superseded, resent.failed], [5, 245, 1, 4]);
  });

  test('iterate right after upsertMany: every listing just written, none missing', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
    const fresh = client(partner.secret);
    const batch = Array.from({ length: 563 }, (_, i) => ({
      externalReference: `IT-${i}`,
      ...car({ title: `Car ${i}`, dealerProfileId: tree.ids.B }),
    }));
    const report = await fresh.listings.upsertMany(batch);
    assert.equal(report.created, 563);
    const seen = new Set<string>();
    for await (const listing of fresh.listings.iterate({ status: 'all', pageSize: 50 }))
      seen.add(listing.externalReference);
    assert.equal(seen.size, 563, `iterate() returned ${seen.size} of 563`);
  });

  test('iterate follows cursors over several pages; a stored cursor resumes; later, only changes', async () => {
    const query = { mine: true, status: 'all' as const, pageSize: 60 };
    const pages: number[] = [];
    for await (const page of forecourt.listings.iterate(query).pages()) pages.push(page.data.length);
    assert.deepEqual(pages, [60, 60, 60, 60, 5]);

    // Stop mid-way, keep the cursor, resume from it: together, every listing.
    const first = forecourt.listings.iterate(query);
    const seen = new Set<string>();
    for await (const listing of first) {
      seen.add(listing.externalReference);
      if (seen.size === 130) break;
    }
    assert.ok(first.cursor, 'a cursor after two whole pages');
    const stored = first.cursor;
    const resumed = forecourt.listings.iterate({ ...query, cursor: stored });
    let again = 0;
    for await (const listing of resumed) {
      if (seen.has(listing.externalReference)) again++;
      seen.add(listing.externalReference);
    }
    assert.equal(seen.size, 245);
    assert.equal(again, 10, 'the page that was cut off comes again; nothing before it');

    // Caught up: the last cursor yields only what changed since.
    await forecourt.listings.markSold('UM-3');
    await forecourt.listings.put('UM-4', car({ price: 4444, dealerProfileId: tree.ids.A2 }));
    const changed = [];
    for await (const listing of forecourt.listings.iterate({ ...query, cursor: resumed.cursor }))
      changed.push(listing);
    assert.deepEqual(
      changed.map((l) => [l.externalReference, l.status, l.price]),
      [
        ['UM-3', 'sold', 19950],
        ['UM-4', 'active', 4444],
      ],
    );
  });
});

test('a batch over the 5 MiB body limit is halved until it fits; a single listing over it fails alone', async () => {
  const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
  // About 60 kB each, within every field limit: 100 of them are over 5 MiB, 50 are not.
  const image = (i: number, k: number) => `https://img.example/${i}/${k}/${'x'.repeat(1950)}`;
  const items: ListingInput[] = Array.from({ length: 100 }, (_, i) =>
    car({
      externalReference: `BIG-${i}`,
      description: 'd'.repeat(20_000),
      images: Array.from({ length: 20 }, (_, k) => image(i, k)),
    }),
  );
  // Unknown fields are ignored by the service, but they still travel: this one alone is 6 MB.
  items.push({ ...car({ externalReference: 'HUGE' }), notes: 'n'.repeat(6_000_000) } as ListingInput);
  const batches: BatchReport[] = [];
  const report = await client(partner.secret).listings.upsertMany(items, {
    onBatch: (b) => void batches.push(b),
  });
  assert.deepEqual([report.created, report.failed], [100, 1]);
  assert.deepEqual(
    batches.map((b) => [b.indices.length, b.requestIds.length]),
    [
      [100, 3],
      [1, 1],
    ],
  );
  const huge = report.items[100]!;
  assert.ok(!huge.ok);
  assert.deepEqual([huge.status, huge.code, huge.externalReference], [413, 'PAYLOAD_TOO_LARGE', 'HUGE']);
});

describe('rate limits: 429 + Retry-After, and pacing by RateLimit-Remaining', () => {
  test('a 429 is waited out (Retry-After, capped by maxDelayMs here) and the batch sent again', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
    await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 2 });
    clock.fresh();
    // Another process of the same partner used up the minute.
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await app.call('GET', '/api/external/v1/listings', { secret: partner.secret })).status,
        200,
      );
    }
    const waits: WaitInfo[] = [];
    const forecourt = client(partner.secret, {
      maxDelayMs: 300,
      onWait: async (info) => {
        waits.push(info);
        // The operator raises the limit meanwhile, so the test need not wait for the minute to end.
        await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 1000 });
      },
    });
    const items = [1, 2, 3].map((i) => ({ externalReference: `RL-${i}`, ...car() }));
    const report = await forecourt.listings.upsertMany(items);
    assert.equal(report.created, 3);
    assert.equal(waits.length, 1, JSON.stringify(waits));
    const [wait] = waits;
    assert.deepEqual(
      [wait!.reason, wait!.status, wait!.attempt, wait!.path],
      ['rate-limited', 429, 1, '/listings/bulk-upsert'],
    );
    assert.ok(wait!.requestedMs! >= 1000, `Retry-After read: ${wait!.requestedMs}`);
    assert.equal(wait!.delayMs, 300);
  });

  test('RateLimit-Remaining: 0 makes the next call wait for the window instead of earning a 429', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.B!] });
    await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 2 });
    clock.fresh();
    const waits: WaitInfo[] = [];
    const forecourt = client(partner.secret, {
      maxDelayMs: 300,
      onWait: async (info) => {
        waits.push(info);
        await app.admin('PATCH', `/partners/${partner.id}`, { rateLimitPerMinute: 1000 });
      },
    });
    await forecourt.listings.list();
    await forecourt.listings.list(); // the last one of the minute: Remaining 0
    assert.equal(waits.length, 0);
    await forecourt.listings.list();
    assert.deepEqual(
      waits.map((w) => [w.reason, w.attempt, w.delayMs]),
      [['pacing', 0, 300]],
    );
  });
});

describe('network failures and 5xx, through a flaky proxy in front of the real service', () => {
  let proxy: Awaited<ReturnType<typeof startFlakyProxy>>;
  let partner: { id: string; secret: string };
  before(async () => {
    proxy = await startFlakyProxy(app);
    partner = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
  });
  after(() => proxy.close());

  const viaProxy = (options: Partial<Parameters<typeof createClient>[0]> = {}) =>
    createClient({ baseUrl: proxy.url, secret: partner.secret, ca, backoffMs: 20, ...options });
  const items = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({ externalReference: `${prefix}-${i}`, ...car() }));

  test('dropped connections, a 503 with Retry-After and a 502 are retried; Retry-After is honoured', async () => {
    const waits: WaitInfo[] = [];
    proxy.plan('reset', { status: 503, retryAfter: 1 }, 'forward', { status: 502 }, 'forward');
    const from = proxy.seen.length;
    const report = await viaProxy({ onWait: (w) => void waits.push(w) }).listings.upsertMany(
      items('NF', 150),
    );
    assert.deepEqual([report.created, report.failed], [150, 0]);
    assert.deepEqual(
      waits.map((w) => [w.reason, w.attempt, w.status]),
      [
        ['network-error', 1, undefined],
        ['server-error', 2, 503],
        ['server-error', 1, 502],
      ],
    );
    assert.equal(waits[1]!.requestedMs, 1000);
    const seen = proxy.seen.slice(from);
    assert.deepEqual(
      seen.map((s) => s.action),
      ['reset', '503', 'forward', '502', 'forward'],
    );
    assert.ok(seen[2]!.at - seen[1]!.at >= 1000, 'waited the Retry-After second');
  });

  test('the client asks for brotli and reads the compressed page as any other', async () => {
    // A partner of its own: the other tests here read this describe's partner's first page.
    const own = await createPartner(app, { roots: [tree.ids.B!], scopes: ALL_SCOPES });
    const client = viaProxy({ secret: own.secret });
    await client.listings.upsertMany(items('CE', 60));
    const from = proxy.seen.length;
    const page = await client.listings.list({ mine: true, status: 'all', pageSize: 50 });
    assert.equal(page.data.length, 50);
    const seen = proxy.seen.slice(from);
    assert.equal(seen.length, 1);
    // Node.js's fetch (and undici's, used with `ca`) asks for brotli first over HTTPS, and decodes.
    assert.equal(seen[0]!.acceptEncoding, 'br, gzip, deflate');
    assert.equal(seen[0]!.contentEncoding, 'br', 'the service chose brotli, the first asked');
    // What travelled is the compressed page: a small part of the JSON the client decoded.
    const json = Buffer.byteLength(JSON.stringify(page.data));
    assert.ok(seen[0]!.bytes! < json / 4, `${seen[0]!.bytes} bytes on the wire for ${json} of listings`);
  });

  test('an answer lost after the write: the retry is harmless (the batch reports unchanged)', async () => {
    const batch = items('LA', 20);
    proxy.plan('lose-answer');
    const report = await viaProxy().listings.upsertMany(batch);
    assert.deepEqual([report.unchanged, report.failed], [20, 0]);
    const page = await viaProxy().listings.list({ mine: true, status: 'all', pageSize: 200 });
    assert.equal(page.data.filter((l) => l.externalReference.startsWith('LA-')).length, 20);
  });

  test('attempts are bounded; 4xx other than 429 are never retried; a signal stops waiting at once', async () => {
    proxy.plan({ status: 503 }, { status: 503 }, { status: 503 });
    let from = proxy.seen.length;
    const down = await rejection(viaProxy({ retries: 2 }).listings.upsertMany(items('DN', 3)));
    assert.deepEqual([down.status, down.code, proxy.seen.length - from], [503, 'HTTP_503', 3]);

    proxy.plan('reset', 'reset');
    const gone = await rejection(viaProxy({ retries: 1 }).listings.list());
    assert.deepEqual([gone.status, gone.code], [0, 'NETWORK_ERROR']);
    assert.ok(gone.cause instanceof Error);

    from = proxy.seen.length;
    const invalid = await rejection(viaProxy().listings.put('BAD', car({ price: -1 })));
    assert.deepEqual([invalid.status, proxy.seen.length - from], [422, 1]);

    proxy.plan({ status: 503, retryAfter: 30 });
    const controller = new AbortController();
    const started = Date.now();
    const run = viaProxy().listings.upsertMany(items('AB', 3), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stopped by the user')), 200);
    await assert.rejects(run, /stopped by the user/);
    assert.ok(Date.now() - started < 2000);
  });
});
