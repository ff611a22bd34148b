import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bootApp, createTree, EXT, listingBody, type TestApp, type Tree } from './helpers/app.js';
import { getListing, put, putOk, remove, setStatus } from './helpers/listings-api.js';
import { assertError, ref, sleep, validationPaths, writer } from './helpers/write-fixtures.js';

/**
 * PATCH /listings/{ref} (JSON Merge Patch), ETags on every listing answer and If-Match on every
 * write to one listing (docs/contract.md#patch, #etag-and-if-match). Runs on PGlite, and on
 * PostgreSQL when DATABASE_URL is set.
 */

let app: TestApp;
let tree: Tree;
let secret: string;

before(async () => {
  app = await bootApp();
  tree = await createTree(app);
  secret = (await writer(app, [tree.ids.A!])).secret;
});
after(() => app.close());

const MERGE = 'application/merge-patch+json';

function patch(reference: string, body: unknown, headers: Record<string, string> = {}) {
  return app.call('PATCH', `${EXT}/listings/${encodeURIComponent(reference)}`, {
    secret,
    raw: JSON.stringify(body),
    headers: { 'content-type': MERGE, ...headers },
  });
}

async function readBack(id: string) {
  const reply = await app.call('GET', `${EXT}/listings/${id}`, { secret });
  assert.equal(reply.status, 200, reply.text);
  return { data: reply.body.data, etag: reply.headers.etag as string };
}

describe('PATCH /listings/{externalReference}', () => {
  test('changes only the fields it names; null clears an optional field', async () => {
    const r = ref('patch');
    const { listingId } = await putOk(
      app,
      secret,
      r,
      listingBody({ mileage: 1000, variant: '1.5 TSI', color: 'grey', city: 'Gent' }),
    );
    const before = await getListing(app, secret, listingId);
    const reply = await patch(r, { mileage: 2500, variant: null, location: { city: null } });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.data.outcome, 'updated');
    assert.equal(reply.body.data.listingId, listingId);
    const after = await getListing(app, secret, listingId);
    assert.equal(after.mileage, 2500);
    assert.equal(after.variant ?? null, null);
    assert.equal(after.location?.city ?? null, null);
    // Everything it did not name is as it was.
    assert.equal(after.color, 'grey');
    assert.equal(after.title, before.title);
    assert.equal(after.price, before.price);
    assert.equal(after.status, before.status);
    assert.deepEqual(after.dealer, before.dealer);
  });

  test('application/json is taken too; an alias is applied, not outvoted by the stored field', async () => {
    const r = ref('patch-json');
    const { listingId } = await putOk(
      app,
      secret,
      r,
      listingBody({ historyReportUrl: 'https://www.car-pass.be/a' }),
    );
    const reply = await app.call('PATCH', `${EXT}/listings/${encodeURIComponent(r)}`, {
      secret,
      body: { historyReport: '12345678901' },
    });
    assert.equal(reply.status, 200, reply.text);
    assert.equal((await getListing(app, secret, listingId)).historyReportUrl, '12345678901');
  });

  test('a patch moves the listing to another dealer by location code (not outvoted by the stored id)', async () => {
    const r = ref('patch-dealer');
    const { listingId } = await putOk(app, secret, r, listingBody({ dealerProfileId: tree.ids.A1 }));
    const moved = await patch(r, { dealerLocationCode: tree.codes.A2 });
    assert.equal(moved.status, 200, moved.text);
    assert.equal((await getListing(app, secret, listingId)).dealer.id, tree.ids.A2);
    // null: the dealer stays (as a PUT without a dealer keeps it).
    assert.equal((await patch(r, { dealerProfileId: null })).body.data.outcome, 'unchanged');
    // A dealer outside the scope is refused, as in a PUT.
    assertError(await patch(r, { dealerProfileId: tree.ids.B }), 403, 'PROFILE_FORBIDDEN');
  });

  test('the result is validated as a whole, like a PUT (unknown_field, price for active)', async () => {
    const r = ref('patch-invalid');
    await putOk(app, secret, r, listingBody({ status: 'draft', price: null }));
    const unknown = await patch(r, { milage: 3 });
    assert.deepEqual(validationPaths(unknown), ['milage']);
    assert.match(unknown.body.error.issues[0].message, /mileage/);
    // The stored listing has no price: making it active needs one, and a bad year is listed too.
    const active = await patch(r, { status: 'active', year: 1800 });
    assert.deepEqual(validationPaths(active), ['price', 'year']);
    // title is required: null clears it, so the result is refused.
    assert.deepEqual(validationPaths(await patch(r, { title: null })), ['title']);
    // An unknown name set to null is refused too, though applying it would remove nothing, at the
    // top and inside location, and beside the other issues of the same patch.
    const erased = await patch(r, { milage: null });
    assert.deepEqual(validationPaths(erased), ['milage']);
    assert.equal(erased.body.error.issues[0].code, 'unknown_field');
    assert.match(erased.body.error.issues[0].message, /mileage/);
    assert.deepEqual(validationPaths(await patch(r, { location: { citty: null } })), ['location.citty']);
    assert.deepEqual(validationPaths(await patch(r, { milage: null, year: 1800 })), ['milage', 'year']);
    // A known name set to null still clears it (price may be absent on a draft).
    assert.equal((await patch(r, { price: null })).status, 200);
    // Nothing of the refused patches was applied.
    const listed = await app.call(
      'GET',
      `${EXT}/listings?externalReference=${encodeURIComponent(r)}&status=all`,
      { secret },
    );
    assert.equal(listed.body.data[0].status, 'draft');
  });

  test('a patch cannot change or clear the reference: reference_mismatch; repeating it is taken', async () => {
    // Found by review (2026-11-30): {"externalReference": "NEW"} answered 200 unchanged, as if
    // the listing had been renamed.
    const r = ref('rename');
    const { listingId } = await putOk(app, secret, r, listingBody({ mileage: 10 }));
    for (const body of [
      { externalReference: ref('new') },
      { external_reference: 'x' },
      { externalReference: null },
    ]) {
      const reply = await patch(r, { ...body, mileage: 20 });
      assert.equal(reply.status, 422, reply.text);
      const [name] = Object.keys(body);
      assert.deepEqual(
        reply.body.error.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
        [[name, 'reference_mismatch']],
      );
    }
    assert.equal((await getListing(app, secret, listingId)).mileage, 10);
    const same = await patch(r, { externalReference: r, mileage: 20 });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.data.outcome, 'updated');
  });

  test('an unknown reference is 404 (a patch never creates)', async () => {
    const r = ref('patch-missing');
    assertError(await patch(r, { title: 'x', price: 1000 }), 404, 'NOT_FOUND');
    const listed = await app.call(
      'GET',
      `${EXT}/listings?externalReference=${encodeURIComponent(r)}&status=all`,
      { secret },
    );
    assert.equal(listed.body.data.length, 0);
  });

  test('a patch that changes nothing answers unchanged and leaves updatedAt (and the ETag)', async () => {
    const r = ref('patch-same');
    const { listingId } = await putOk(app, secret, r, listingBody({ mileage: 500 }));
    const before = await readBack(listingId);
    await sleep(5);
    const reply = await patch(r, { mileage: 500 });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.data.outcome, 'unchanged');
    assert.equal(reply.headers.etag, before.etag);
    const after = await readBack(listingId);
    assert.equal(after.data.updatedAt, before.data.updatedAt);
    // An empty patch changes nothing either.
    assert.equal((await patch(r, {})).body.data.outcome, 'unchanged');
  });

  test('the merge-patch media type is for PATCH only; other bodies stay application/json', async () => {
    const r = ref('patch-type');
    const reply = await app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
      secret,
      raw: JSON.stringify(listingBody()),
      headers: { 'content-type': MERGE },
    });
    assertError(reply, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('ETag and If-Match', () => {
  test('every write to one listing answers with the ETag a GET then gives', async () => {
    const r = ref('etag');
    const created = await put(app, secret, r, listingBody());
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.listingId;
    assert.equal(created.headers.etag, (await readBack(id)).etag);
    const patched = await patch(r, { mileage: 7 });
    assert.equal(patched.headers.etag, (await readBack(id)).etag);
    const status = await setStatus(app, secret, r, { status: 'pending' });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.headers.etag, (await readBack(id)).etag);
    const sold = await remove(app, secret, r);
    assert.equal(sold.status, 200, sold.text);
    assert.equal(sold.headers.etag, (await readBack(id)).etag);
    const etags = new Set([created, patched, status, sold].map((x) => x.headers.etag));
    assert.equal(etags.size, 4, 'each change is a new version');
  });

  test('a dry run answers with the ETag that stays (none for a new reference)', async () => {
    const r = ref('etag-dry');
    const dryNew = await put(app, secret, r, listingBody(), { query: '?dryRun=true' });
    assert.equal(dryNew.status, 200, dryNew.text);
    assert.equal(dryNew.headers.etag, undefined);
    const created = await put(app, secret, r, listingBody());
    const dry = await put(app, secret, r, listingBody({ mileage: 99 }), { query: '?dryRun=true' });
    assert.equal(dry.body.data.outcome, 'would_update');
    assert.equal(dry.headers.etag, created.headers.etag, 'nothing was written: the version stays');
    assert.equal((await readBack(created.body.data.listingId)).etag, created.headers.etag);
  });

  test('a stale If-Match is 412 with the current ETag, and nothing is written', async () => {
    const r = ref('ifmatch');
    const first = await put(app, secret, r, listingBody({ mileage: 1 }));
    const id = first.body.data.listingId;
    const stale = first.headers.etag as string;
    // Another writer changes the listing.
    const second = await patch(r, { mileage: 2 });
    const current = second.headers.etag as string;
    assert.notEqual(current, stale);

    for (const attempt of [
      () => patch(r, { mileage: 3 }, { 'if-match': stale }),
      () =>
        app.call('POST', `${EXT}/listings/${encodeURIComponent(r)}/status`, {
          secret,
          body: { status: 'sold' },
          headers: { 'if-match': stale },
        }),
      () =>
        app.call('DELETE', `${EXT}/listings/${encodeURIComponent(r)}`, {
          secret,
          headers: { 'if-match': stale },
        }),
      () =>
        app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
          secret,
          body: listingBody({ mileage: 3 }),
          headers: { 'if-match': stale },
        }),
    ]) {
      const reply = await attempt();
      assertError(reply, 412, 'PRECONDITION_FAILED');
      assert.equal(reply.headers.etag, current);
    }
    const now = await readBack(id);
    assert.equal(now.etag, current);
    assert.equal(now.data.mileage, 2);
    assert.equal(now.data.status, 'active');

    // The current ETag (one of a list, too) lets the write through.
    const ok = await patch(r, { mileage: 4 }, { 'if-match': `"nope", ${current}` });
    assert.equal(ok.status, 200, ok.text);
    const put2 = await app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
      secret,
      body: listingBody({ mileage: 5 }),
      headers: { 'if-match': ok.headers.etag as string },
    });
    assert.equal(put2.status, 200, put2.text);
    // A weak tag never matches a write (strong comparison).
    assertError(
      await patch(r, { mileage: 6 }, { 'if-match': `W/${put2.headers.etag}` }),
      412,
      'PRECONDITION_FAILED',
    );
  });

  test('If-Match: * means "must exist": a PUT with it never creates', async () => {
    const r = ref('star');
    const refused = await app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
      secret,
      body: listingBody(),
      headers: { 'if-match': '*' },
    });
    assertError(refused, 412, 'PRECONDITION_FAILED');
    assert.equal(refused.headers.etag, undefined);
    const named = await app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
      secret,
      body: listingBody(),
      headers: { 'if-match': '"abc"' },
    });
    assertError(named, 412, 'PRECONDITION_FAILED');
    await putOk(app, secret, r, listingBody(), 201);
    const replaced = await app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
      secret,
      body: listingBody({ mileage: 9 }),
      headers: { 'if-match': '*' },
    });
    assert.equal(replaced.status, 200, replaced.text);
    // A patch, status change or delete of a reference that does not exist stays 404: that
    // answer comes first (RFC 9110 §13.2.1), whatever If-Match says.
    const missing = ref('star-missing');
    assertError(await patch(missing, { mileage: 1 }, { 'if-match': '*' }), 404, 'NOT_FOUND');
  });

  test('two writers with the same ETag: exactly one wins, the other gets 412', async () => {
    const r = ref('race');
    const first = await put(app, secret, r, listingBody({ mileage: 1 }));
    const etag = first.headers.etag as string;
    const replies = await Promise.all(
      [10, 20, 30, 40].map((mileage, i) =>
        i % 2
          ? patch(r, { mileage }, { 'if-match': etag })
          : app.call('PUT', `${EXT}/listings/${encodeURIComponent(r)}`, {
              secret,
              body: listingBody({ mileage }),
              headers: { 'if-match': etag },
            }),
      ),
    );
    const statuses = replies.map((x) => x.status).sort();
    assert.deepEqual(statuses, [200, 412, 412, 412], replies.map((x) => x.text).join('\n'));
    const winner = replies.find((x) => x.status === 200)!;
    for (const loser of replies.filter((x) => x.status === 412)) {
      assert.equal(loser.headers.etag, winner.headers.etag);
    }
  });
});

describe('bulk upsert and If-Match', () => {
  test('a bulk upsert with If-Match is refused, writing nothing: bulk takes no preconditions', async () => {
    const r = ref('bulk-ifmatch');
    const reply = await app.call('POST', `${EXT}/listings/bulk-upsert`, {
      secret,
      body: [{ externalReference: r, ...listingBody() }],
      headers: { 'if-match': '*' },
    });
    const error = assertError(reply, 412, 'PRECONDITION_FAILED');
    assert.match(error.message, /takes no If-Match.*Nothing was written/);
    const listed = await app.call(
      'GET',
      `${EXT}/listings?externalReference=${encodeURIComponent(r)}&status=all`,
      { secret },
    );
    assert.equal(listed.body.data.length, 0);
    // An expected version inside an item is a field we do not know, never ignored.
    const item = await app.call('POST', `${EXT}/listings/bulk-upsert`, {
      secret,
      body: [{ externalReference: r, ...listingBody(), ifMatch: '"abc"' }],
    });
    assert.equal(item.status, 200, item.text);
    assert.equal(item.body.data.errors[0].issues[0].code, 'unknown_field');
  });
});

describe('GET /listings/{id} with a reference', () => {
  test('400 saying how to read by your own reference', async () => {
    const reply = await app.call('GET', `${EXT}/listings/MY-REF-1`, { secret });
    const error = assertError(reply, 400, 'INVALID_QUERY');
    assert.match(error.message, /GET \/listings\?externalReference=MY-REF-1&status=all/);
    assert.match(error.issues[0].message, /externalReference=MY-REF-1&status=all/);
  });
});
