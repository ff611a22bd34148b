import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bootApp, createTree, EXT, listingBody, type TestApp, type Tree } from './helpers/app.js';
import { bulk, put, putOk, remove, setStatus } from './helpers/listings-api.js';
import { assertError, ref, writer } from './helpers/write-fixtures.js';

/**
 * Issue 41, the service's side (points 9 to 12 and 15): what a write answers, and what a read of a
 * reference-shaped id says. Each test failed on the code before it.
 */

describe('write answers (issue 41)', () => {
  let app: TestApp;
  let tree: Tree;
  let secret: string;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    secret = (await writer(app, [tree.ids.A!])).secret;
  });
  after(() => app.close());

  const call = (
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> },
  ) => app.call(method, `${EXT}${path}`, { secret, ...options });

  test('9. GET /listings/{uuid} of a reference says how to read by reference, and names the listing', async () => {
    const uuidReference = '65694eb4-6a0f-4b1e-9d3c-0f2a1b3c4d5e';
    const created = await putOk(
      app,
      secret,
      uuidReference,
      listingBody({ dealerProfileId: tree.ids.A1 }),
      201,
    );
    const reply = await call('GET', `/listings/${uuidReference}`, {});
    const error = assertError(reply, 404, 'NOT_FOUND');
    assert.match(error.message, /GET \/listings\?externalReference=.*&status=all/);
    assert.match(error.message, new RegExp(`externalReference "${uuidReference}"`));
    assert.match(error.message, new RegExp(created.listingId));
    // An id that is nobody's reference: the hint, and no claim about a listing.
    const unknown = '00000000-0000-4000-8000-000000000000';
    const plain = assertError(await call('GET', `/listings/${unknown}`, {}), 404, 'NOT_FOUND');
    assert.match(plain.message, /GET \/listings\?externalReference=…&status=all|externalReference=/);
    assert.doesNotMatch(plain.message, /has id/);
  });

  test('9. the hint also finds an upper-case UUID-shaped reference: it is searched as received', async () => {
    // References compare case-sensitively; the id used to be lower-cased before the search.
    const uuidReference = '6F1A2B3C-4D5E-4F60-8A7B-9C0D1E2F3A4B';
    const created = await putOk(
      app,
      secret,
      uuidReference,
      listingBody({ dealerProfileId: tree.ids.A1 }),
      201,
    );
    const error = assertError(await call('GET', `/listings/${uuidReference}`, {}), 404, 'NOT_FOUND');
    assert.match(error.message, new RegExp(`externalReference "${uuidReference}"`));
    assert.match(error.message, new RegExp(created.listingId));
    // A listing's id still reads in either case.
    const byId = await call('GET', `/listings/${created.listingId.toUpperCase()}`, {});
    assert.equal(byId.status, 200, byId.text);
  });

  test('10. an unquoted If-Match is a 400 INVALID_HEADER on PUT, PATCH, status and DELETE', async () => {
    const reference = ref('etag');
    await putOk(app, secret, reference, listingBody({ dealerProfileId: tree.ids.A1 }), 201);
    const read = await call('PUT', `/listings/${reference}`, {
      body: listingBody({ dealerProfileId: tree.ids.A1 }),
    });
    const etag = read.headers.etag as string;
    assert.match(etag, /^"[^"]+"$/);
    const bare = etag.slice(1, -1);
    const attempts = [
      ['PUT', `/listings/${reference}`, listingBody({ dealerProfileId: tree.ids.A1, price: 1 })],
      ['PATCH', `/listings/${reference}`, { price: 2 }],
      ['POST', `/listings/${reference}/status`, { status: 'sold' }],
      ['DELETE', `/listings/${reference}`, undefined],
    ] as const;
    for (const [method, path, body] of attempts) {
      const reply = await call(method, path, { body, headers: { 'if-match': bare } });
      const error = assertError(reply, 400, 'INVALID_HEADER');
      assert.match(error.message, /If-Match/);
      assert.match(error.message, /quote/i);
      assert.match(error.message, /W\/"/);
    }
    // Still honoured when well-formed: a list with the current tag, and *.
    const ok = await call('PATCH', `/listings/${reference}`, {
      body: { mileage: 10 },
      headers: { 'if-match': `"nope", ${etag}` },
    });
    assert.equal(ok.status, 200, ok.text);
    const star = await call('POST', `/listings/${reference}/status`, {
      body: { status: 'active' },
      headers: { 'if-match': '*' },
    });
    assert.equal(star.status, 200, star.text);
  });

  test('11. a dry run says what it would do: 200, dryRun, would_* outcomes, no id of a listing that does not exist, no Location', async () => {
    const fresh = ref('dry');
    const created = await put(app, secret, fresh, listingBody({ dealerProfileId: tree.ids.A1 }), {
      query: '?dryRun=true',
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.headers.location, undefined);
    assert.equal(created.body.meta.dryRun, true);
    assert.equal(created.body.data.dryRun, true);
    assert.equal(created.body.data.outcome, 'would_create');
    assert.equal(created.body.data.listingId, null);
    assert.equal(created.body.data.created, false);
    const absent = await app.call('GET', `${EXT}/listings?externalReference=${fresh}&status=all`, { secret });
    assert.equal(absent.body.data.length, 0, 'nothing written');

    const existing = ref('dry');
    const stored = await putOk(app, secret, existing, listingBody({ dealerProfileId: tree.ids.A1 }), 201);
    const update = await put(app, secret, existing, listingBody({ dealerProfileId: tree.ids.A1, price: 1 }), {
      query: '?dryRun=true',
    });
    assert.equal(update.status, 200, update.text);
    assert.equal(update.body.data.outcome, 'would_update');
    assert.equal(update.body.data.listingId, stored.listingId);
    const same = await put(app, secret, existing, listingBody({ dealerProfileId: tree.ids.A1 }), {
      query: '?dryRun=true',
    });
    assert.equal(same.body.data.outcome, 'would_be_unchanged');

    const patch = await call('PATCH', `/listings/${existing}?dryRun=true`, { body: { price: 5 } });
    assert.equal(patch.status, 200, patch.text);
    assert.equal(patch.body.data.outcome, 'would_update');
    assert.equal(patch.body.data.dryRun, true);
    assert.equal(patch.body.meta.dryRun, true);

    const status = await call('POST', `/listings/${existing}/status?dryRun=true`, {
      body: { status: 'sold' },
    });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.data.outcome, 'would_update');
    assert.equal(status.body.data.dryRun, true);
    const deleted = await call('DELETE', `/listings/${existing}?dryRun=true`, {});
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.data.outcome, 'would_update');
    const after = await call('GET', `/listings/${stored.listingId}`, {});
    assert.equal(after.body.data.status, 'active', 'nothing written by PATCH, status or DELETE dry runs');
    assert.equal(after.body.data.price, 19950);

    const batch = await bulk(
      app,
      secret,
      [
        listingBody({ externalReference: ref('dry'), dealerProfileId: tree.ids.A1 }),
        listingBody({ externalReference: existing, dealerProfileId: tree.ids.A1, price: 3 }),
        listingBody({ externalReference: existing, dealerProfileId: tree.ids.A1 }),
      ],
      '?dryRun=true',
    );
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual(
      batch.body.data.results.map((r: { outcome: string }) => r.outcome),
      ['would_create', 'superseded', 'would_be_unchanged'],
    );
    assert.equal(batch.body.data.results[0].listingId, null);
    assert.equal(batch.body.data.results[0].dryRun, true);
  });

  test('12. a bulk item outside the dealer scope with a bad year: both problems in one answer, with paths', async () => {
    const reply = await bulk(app, secret, [
      listingBody({ externalReference: ref('scope'), dealerProfileId: tree.ids.B1, year: 1800 }),
      listingBody({ externalReference: ref('scope'), dealerLocationCode: tree.codes.B, year: 1800 }),
      listingBody({ externalReference: ref('scope'), dealerProfileId: tree.ids.B1 }),
    ]);
    assert.equal(reply.status, 200, reply.text);
    const [both, byCode, onlyScope] = reply.body.data.errors;
    assert.equal(both.status, 422, JSON.stringify(both));
    assert.deepEqual(both.issues.map((i: { path: string }) => i.path).sort(), ['dealerProfileId', 'year']);
    assert.equal(
      both.issues.find((i: { path: string }) => i.path === 'dealerProfileId').code,
      'profile_forbidden',
    );
    assert.deepEqual(byCode.issues.map((i: { path: string }) => i.path).sort(), [
      'dealerLocationCode',
      'year',
    ]);
    assert.equal(onlyScope.status, 403);
    assert.equal(onlyScope.code, 'PROFILE_FORBIDDEN');
    assert.deepEqual(
      onlyScope.issues.map((i: { path: string }) => i.path),
      ['dealerProfileId'],
    );
    const single = await put(
      app,
      secret,
      ref('scope'),
      listingBody({ dealerProfileId: tree.ids.B1, year: 1800 }),
    );
    const error = assertError(single, 422, 'VALIDATION_FAILED');
    assert.deepEqual(error.issues.map((i: { path: string }) => i.path).sort(), ['dealerProfileId', 'year']);
  });

  test('15. messages: no stray period, year bounds as numbers, PATCH names merge-patch, 201 has Location', async () => {
    const typo = assertError(
      await put(app, secret, ref('msg'), listingBody({ dealerProfileId: tree.ids.A1, milage: 5 })),
      422,
      'VALIDATION_FAILED',
    );
    assert.match(typo.message, /did you mean `mileage`\?$/);
    assert.doesNotMatch(typo.message, /\?\./);

    const year = assertError(
      await put(app, secret, ref('msg'), listingBody({ dealerProfileId: tree.ids.A1, year: 1800 })),
      422,
      'VALIDATION_FAILED',
    );
    const next = new Date().getUTCFullYear() + 1;
    assert.equal(year.issues[0].message, `must be between 1900 and ${next}`);
    const latitude = assertError(
      await put(app, secret, ref('msg'), listingBody({ dealerProfileId: tree.ids.A1, latitude: 91 })),
      422,
      'VALIDATION_FAILED',
    );
    assert.equal(latitude.issues[0].message, 'must be between -90 and 90');

    const reference = ref('msg');
    const created = await put(app, secret, reference, listingBody({ dealerProfileId: tree.ids.A1 }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers.location, `/api/external/v1/listings/${created.body.data.listingId}`);
    const replaced = await put(
      app,
      secret,
      reference,
      listingBody({ dealerProfileId: tree.ids.A1, price: 7 }),
    );
    assert.equal(replaced.status, 200);
    assert.equal(replaced.headers.location, undefined);

    const wrongType = await app.call('PATCH', `${EXT}/listings/${reference}`, {
      secret,
      raw: 'price=5',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const media = assertError(wrongType, 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(media.message, /application\/merge-patch\+json/);
    const status = await setStatus(app, secret, reference, { status: 'sold' });
    assert.equal(status.status, 200);
    const gone = await remove(app, secret, reference);
    assert.equal(gone.status, 200);
  });
});
