import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
import { assertError, getOk } from './helpers/read-fixtures.js';

type IssueRow = [string, string, string];
const rows = (issues: { path: string; code: string; message: string }[]): IssueRow[] =>
  issues.map((i) => [i.path, i.code, i.message]);

/** Issue 16: a misspelt field is refused, never dropped, and every problem is told at once. */
describe('listing bodies: unknown fields, every issue in one answer', () => {
  let app: TestApp;
  let tree: Tree;
  let writer: string;
  let group: string;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    writer = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
    // Two roots: no single dealer to default to.
    group = (await createPartner(app, { roots: [tree.ids.A!, tree.ids.B!], scopes: ALL_SCOPES })).secret;
  });
  after(() => app?.close());

  /** The admin API, with the operator's token, answering whatever it answers (app.admin throws on 4xx). */
  const call = (method: string, path: string, body?: unknown) =>
    app.call(method, `/api/admin/v1${path}`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
      body,
    });

  test('PUT with a misspelt field is 422 unknown_field naming the real one, and clears nothing', async () => {
    const ref = unique('typo');
    const id = await putListing(app, writer, ref, listingBody({ mileage: 45000, color: 'Blue' }));
    const reply = await app.call('PUT', `${EXT}/listings/${ref}`, {
      secret: writer,
      body: listingBody({ milage: 50000, colour: 'Red', fooBar: 1 }),
    });
    const error = assertError(reply, 422, 'VALIDATION_FAILED');
    assert.deepEqual(rows(error.issues), [
      ['milage', 'unknown_field', 'is not a known field; did you mean `mileage`?'],
      ['colour', 'unknown_field', 'is not a known field; did you mean `color`?'],
      ['fooBar', 'unknown_field', 'is not a known field'],
    ]);
    const stored = (await getOk(app, writer, `/listings/${id}`)).data;
    assert.deepEqual([stored.mileage, stored.color], [45000, 'Blue']);
  });

  test('unknown keys inside location, images and features are refused at their path', async () => {
    const reply = await app.call('PUT', `${EXT}/listings/${unique('nested')}`, {
      secret: writer,
      body: listingBody({
        location: { postcode: '9000', city: 'Gent' },
        images: ['https://img.example/1.jpg', { url: 'https://img.example/2.jpg', order: 1 }],
        features: [{ category: 'comfort', naam: 'Heated seats' }],
      }),
    });
    const error = assertError(reply, 422, 'VALIDATION_FAILED');
    const paths = error.issues.map((i: { path: string }) => i.path);
    assert.ok(paths.includes('location.postcode'), JSON.stringify(error.issues));
    const postcode = error.issues.find((i: { path: string }) => i.path === 'location.postcode');
    assert.equal(postcode.code, 'unknown_field');
    assert.match(postcode.message, /did you mean `postalCode`\?/);
    assert.ok(
      paths.some((p: string) => p.startsWith('images.1')),
      JSON.stringify(error.issues),
    );
    assert.ok(
      paths.some((p: string) => p.startsWith('features.0')),
      JSON.stringify(error.issues),
    );
  });

  test('a listing read back can be sent back as it is: read-only fields are ignored', async () => {
    const ref = unique('roundtrip');
    const id = await putListing(
      app,
      writer,
      ref,
      listingBody({ images: ['https://img.example/1.jpg'], features: ['Towbar'], postalCode: '9000' }),
    );
    const read = (await getOk(app, writer, `/listings/${id}`)).data;
    const again = await app.call('PUT', `${EXT}/listings/${ref}`, { secret: writer, body: read });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.data.outcome, 'unchanged');
  });

  test('every issue in one answer, the cross-field rules next to the field rules', async () => {
    // The issue's own example: once only `year` was reported.
    const reply = await app.call('PUT', `${EXT}/listings/${unique('all')}`, {
      secret: group,
      body: { title: 'x', year: 1800, milage: 3 },
    });
    const error = assertError(reply, 422, 'VALIDATION_FAILED');
    assert.deepEqual(error.issues.map((i: { path: string }) => i.path).sort(), [
      'dealerProfileId',
      'milage',
      'price',
      'year',
    ]);
    // A valid body missing both price and dealer: both at once too.
    const both = assertError(
      await app.call('PUT', `${EXT}/listings/${unique('both')}`, { secret: group, body: { title: 'x' } }),
      422,
      'VALIDATION_FAILED',
    );
    assert.deepEqual(both.issues.map((i: { path: string }) => i.path).sort(), ['dealerProfileId', 'price']);
  });

  test('cross-field rules read the stored listing: a sold listing needs no price, a known one no dealer', async () => {
    const ref = unique('sold');
    await putListing(app, group, ref, listingBody({ dealerProfileId: tree.ids.A1, status: 'sold' }));
    const reply = await app.call('PUT', `${EXT}/listings/${ref}`, {
      secret: group,
      body: { title: 'x', year: 1800 },
    });
    const error = assertError(reply, 422, 'VALIDATION_FAILED');
    // Status omitted keeps "sold" (no price needed); the dealer is kept (none needed).
    assert.deepEqual(
      error.issues.map((i: { path: string }) => i.path),
      ['year'],
    );
    const active = assertError(
      await app.call('PUT', `${EXT}/listings/${ref}`, {
        secret: group,
        body: { title: 'x', status: 'active' },
      }),
      422,
      'VALIDATION_FAILED',
    );
    assert.deepEqual(
      active.issues.map((i: { path: string }) => i.path),
      ['price'],
    );
  });

  test('bulk: each item is judged on its own, with all its issues', async () => {
    const good = unique('bulk-good');
    const reply = await app.call('POST', `${EXT}/listings/bulk-upsert`, {
      secret: group,
      body: [
        listingBody({ externalReference: good, dealerProfileId: tree.ids.B1 }),
        { externalReference: unique('bulk-bad'), title: 'x', year: 1800, milage: 1 },
      ],
    });
    assert.equal(reply.status, 200, reply.text);
    assert.deepEqual(
      reply.body.data.results.map((r: { externalReference: string }) => r.externalReference),
      [good],
    );
    const [failed] = reply.body.data.errors;
    assert.equal(failed.index, 1);
    assert.equal(failed.code, 'VALIDATION_FAILED');
    assert.deepEqual(
      rows(failed.issues).find(([path]) => path === 'milage'),
      ['milage', 'unknown_field', 'is not a known field; did you mean `mileage`?'],
    );
    assert.deepEqual(failed.issues.map((i: { path: string }) => i.path).sort(), [
      'dealerProfileId',
      'milage',
      'price',
      'year',
    ]);
  });

  test('status change: unknown fields are refused next to a bad status', async () => {
    const ref = unique('status');
    await putListing(app, writer, ref, listingBody());
    const error = assertError(
      await app.call('POST', `${EXT}/listings/${ref}/status`, {
        secret: writer,
        body: { status: 'gone', soldPrice: 1 },
      }),
      422,
      'VALIDATION_FAILED',
    );
    assert.deepEqual(
      error.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
      [
        ['status', 'invalid_value'],
        ['soldPrice', 'unknown_field'],
      ],
    );
    const ok = await app.call('POST', `${EXT}/listings/${ref}/status`, {
      secret: writer,
      body: { status: 'sold' },
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test('admin API: unknown fields refused with a suggestion, at any depth of a tree', async () => {
    const created = assertError(
      await call('POST', '/dealers', { locationCode: unique('ADM'), dispayName: 'Typo BV' }),
      422,
      'VALIDATION_FAILED',
    );
    assert.deepEqual(rows(created.issues), [
      ['body.dispayName', 'unknown_field', 'is not a known field; did you mean `displayName`?'],
    ]);
    const nested = assertError(
      await call('POST', '/dealers/import', {
        dealers: [{ locationCode: unique('ADM'), children: [{ locationCode: unique('ADM'), cty: 'Gent' }] }],
      }),
      422,
      'VALIDATION_FAILED',
    );
    assert.deepEqual(rows(nested.issues), [
      ['body.dealers.0.children.0.cty', 'unknown_field', 'is not a known field; did you mean `city`?'],
    ]);
    const partner = assertError(
      await call('POST', '/partners', { name: 'P', acces: { scope: 'global' } }),
      422,
      'VALIDATION_FAILED',
    );
    assert.ok(
      rows(partner.issues).some(
        ([path, code, message]) =>
          path === 'body.acces' && code === 'unknown_field' && message.includes('`access`'),
      ),
      JSON.stringify(partner.issues),
    );
    assertError(await call('GET', '/dealers?limt=5'), 400, 'INVALID_QUERY');
  });

  test('admin API: NUL in names and metadata, deep or huge metadata: 422 with the rule, never 500', async () => {
    const deep = `{"locationCode":"${unique('N')}","metadata":${'{"a":'.repeat(10_000)}{}${'}'.repeat(10_000)}}`;
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/dealers', { locationCode: unique('N'), displayName: 'A\u0000B' }, /U\+0000/],
      ['POST', '/dealers', { locationCode: unique('N'), metadata: { note: 'x\u0000' } }, /U\+0000/],
      ['POST', '/dealers', { locationCode: unique('N'), metadata: { 'k\u0000': 1 } }, /U\+0000/],
      [
        'POST',
        '/dealers',
        { locationCode: unique('N'), metadata: { big: 'x'.repeat(20_000) } },
        /16384 bytes/,
      ],
      ['POST', '/partners', { name: 'P\u0000', access: { scope: 'global' } }, /U\+0000/],
    ];
    for (const [method, path, body, message] of cases) {
      const error = assertError(await call(method, path, body), 422, 'VALIDATION_FAILED');
      assert.match(JSON.stringify(error.issues), message);
    }
    // Nested 10,000 deep (sent as text: the test's own JSON.stringify would not manage it).
    const deepReply = await app.call('POST', '/api/admin/v1/dealers', {
      headers: {
        authorization: `Bearer ${app.running.adminToken}`,
        'content-type': 'application/json',
      },
      raw: deep,
    });
    // Past the body's shape limit (http/json-body.ts) before the metadata rule is asked.
    const deepError = assertError(deepReply, 400, 'INVALID_BODY');
    assert.equal(deepError.issues[0].code, 'too_deep');
    // Numbers JSON would not keep as sent: refused, not stored as null or with other digits, by
    // the body's boundary (a double cannot hold them: http/json-body.ts) or, held exactly but
    // past 2^53, by the metadata rule.
    const dealerWith = (number: string) =>
      app.call('POST', '/api/admin/v1/dealers', {
        headers: { authorization: `Bearer ${app.running.adminToken}`, 'content-type': 'application/json' },
        raw: `{"locationCode":"${unique('N')}","metadata":{"crm":{"id":${number}}}}`,
      });
    for (const number of ['1e999', '-1e999', '12345678901234567890']) {
      const error = assertError(await dealerWith(number), 400, 'INVALID_BODY');
      assert.deepEqual(
        error.issues.map((i: { path: string; code: string }) => [i.path, i.code]),
        [['metadata.crm.id', 'number_not_held']],
        number,
      );
    }
    for (const number of ['1e20', '18446744073709552000']) {
      const error = assertError(await dealerWith(number), 422, 'VALIDATION_FAILED');
      assert.match(JSON.stringify(error.issues), /numbers must be finite/, number);
    }
    // Within the shape limit, deeper than metadata may be: the metadata rule.
    const sixDeep = await call('POST', '/dealers', {
      locationCode: unique('N'),
      metadata: { a: { a: { a: { a: { a: { a: { a: 1 } } } } } } },
    });
    assert.match(JSON.stringify(assertError(sixDeep, 422, 'VALIDATION_FAILED').issues), /at most 5 levels/);
    const fine = await call('POST', '/dealers', {
      locationCode: unique('N'),
      metadata: { crm: { id: 42, tags: ['a', 'b'], nested: { ok: true } } },
    });
    assert.equal(fine.status, 201, fine.text);
  });
});
