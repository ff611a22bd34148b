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
import { putListing, setStatusOk } from './helpers/listings-api.js';
import { assertError, assertInvalidQuery, qs } from './helpers/read-fixtures.js';

/** Issue 16: query strings are read strictly, and what the read surface tells is exactly enough. */
describe('partner queries: unknown parameters, references, hostile text, caching', () => {
  let app: TestApp;
  let tree: Tree;
  let writer: string;
  let other: string;
  let global: string;
  let listingId: string;
  const ref = unique('strict-ref');

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    writer = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
    other = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
    global = (await createPartner(app, { global: true, scopes: ALL_SCOPES })).secret;
    listingId = await putListing(app, writer, ref, listingBody({ dealerProfileId: tree.ids.A1 }));
    // The same reference under another partner: references are namespaced per partner.
    await putListing(app, other, ref, listingBody({ dealerProfileId: tree.ids.A2 }));
  });
  after(() => app?.close());

  test('every partner endpoint refuses an unknown query parameter, naming it', async () => {
    const endpoints: [string, string, unknown?][] = [
      ['GET', `${EXT}/listings`],
      ['GET', `${EXT}/listings/${listingId}`],
      ['GET', `${EXT}/locations`],
      ['GET', `${EXT}/locations/${tree.ids.A1}/listings`],
      ['GET', `${EXT}/reference/enums`],
      ['PUT', `${EXT}/listings/${ref}`, listingBody({ dealerProfileId: tree.ids.A1 })],
      ['POST', `${EXT}/listings/bulk-upsert`, [listingBody({ externalReference: ref })]],
      ['POST', `${EXT}/listings/${ref}/status`, { status: 'active' }],
      ['DELETE', `${EXT}/listings/${unique('none')}`],
    ];
    for (const [method, path, body] of endpoints) {
      const reply = await app.call(method, `${path}?dryrun=true`, { secret: writer, body });
      assertInvalidQuery(reply, 'dryrun');
      const issue = reply.body.error.issues[0];
      assert.equal(issue.code, 'unknown_parameter', `${method} ${path}`);
      assert.equal(issue.path, 'query.dryrun');
      if (method === 'PUT' || path.endsWith('bulk-upsert'))
        assert.equal(issue.message, 'is not a known parameter; did you mean `dryRun`?');
    }
    // Aliases are known names, not typos.
    const ok = await app.call('GET', `${EXT}/listings${qs({ page_size: 1, updated_since: '2020-01-01' })}`, {
      secret: writer,
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test('externalReference reads back your own listing by your own name, never another partner’s', async () => {
    const mine = await app.call('GET', `${EXT}/listings${qs({ externalReference: ref })}`, {
      secret: writer,
    });
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual(
      mine.body.data.map((l: { id: string }) => l.id),
      [listingId],
    );
    assert.equal(mine.body.pagination.totalItems, 1);
    assert.equal(mine.body.meta.filters.externalReference, ref);
    // The alias works; a reference nobody has is an empty list, not an error.
    const alias = await app.call('GET', `${EXT}/listings${qs({ external_reference: ref })}`, {
      secret: writer,
    });
    assert.deepEqual(
      alias.body.data.map((l: { id: string }) => l.id),
      [listingId],
    );
    const none = await app.call('GET', `${EXT}/listings${qs({ externalReference: unique('absent') })}`, {
      secret: writer,
    });
    assert.deepEqual([none.status, none.body.data, none.body.pagination.totalItems], [200, [], 0]);
    // A global reader sees every listing, but a reference names only the caller's own.
    const globalRead = await app.call('GET', `${EXT}/listings${qs({ externalReference: ref })}`, {
      secret: global,
    });
    assert.deepEqual(globalRead.body.data, []);
    // With status=all a sold listing is found too; the default status filter (active) hides it.
    await setStatusOk(app, writer, ref, 'sold');
    const hidden = await app.call('GET', `${EXT}/listings${qs({ externalReference: ref })}`, {
      secret: writer,
    });
    assert.deepEqual(hidden.body.data, []);
    const sold = await app.call('GET', `${EXT}/listings${qs({ externalReference: ref, status: 'all' })}`, {
      secret: writer,
    });
    assert.deepEqual(
      sold.body.data.map((l: { status: string }) => l.status),
      ['sold'],
    );
    await setStatusOk(app, writer, ref, 'active');
    // A value that can never be a reference is refused like on writes.
    for (const bad of [' padded ', 'x'.repeat(129), 'tab\there']) {
      assertInvalidQuery(
        await app.call('GET', `${EXT}/listings${qs({ externalReference: bad })}`, { secret: writer }),
        'externalReference',
      );
    }
  });

  test('a cursor issued for one reference does not serve another', async () => {
    const first = await app.call('GET', `${EXT}/listings${qs({ externalReference: ref, status: 'all' })}`, {
      secret: writer,
    });
    const cursor = first.body.pagination.nextCursor as string;
    assert.ok(cursor);
    const again = await app.call(
      'GET',
      `${EXT}/listings${qs({ externalReference: ref, status: 'all', cursor })}`,
      { secret: writer },
    );
    assert.equal(again.status, 200, again.text);
    assertInvalidQuery(
      await app.call(
        'GET',
        `${EXT}/listings${qs({ externalReference: unique('x'), status: 'all', cursor })}`,
        {
          secret: writer,
        },
      ),
      'cursor',
    );
  });

  test('a location code of another tree and an unknown one get the same answer, naming no id', async () => {
    const answers = [];
    for (const code of [tree.codes.B1!, unique('no-such-code')]) {
      for (const name of ['locationCode', 'location_code']) {
        const reply = await app.call('GET', `${EXT}/listings${qs({ [name]: code })}`, { secret: writer });
        const error = assertError(reply, 403, 'PROFILE_FORBIDDEN');
        assert.doesNotMatch(error.message, /[0-9a-f]{8}-[0-9a-f]{4}-/i, error.message);
        answers.push(error.message.replace(code, '<code>'));
      }
    }
    assert.equal(new Set(answers).size, 1, answers.join(' | '));
  });

  test('a NUL in query text is 400 INVALID_QUERY, never 500', async () => {
    // (An unpaired surrogate cannot arrive in a URL: its UTF-8 form is invalid and is not decoded.)
    const hostile = ['A\u0000B', '\u0000'];
    for (const value of hostile) {
      for (const [path, name] of [
        [`${EXT}/listings`, 'locationCode'],
        [`${EXT}/listings`, 'location_code'],
        [`${EXT}/locations/${tree.ids.A1}/listings`, 'locationCode'],
        [`${EXT}/locations`, 'search'],
      ] as const) {
        const encoded = encodeURIComponent(value);
        const reply = await app.call('GET', `${path}?${name}=${encoded}`, { secret: writer });
        assert.ok(reply.status === 400, `${path} ${name}=${encoded}: ${reply.status} ${reply.text}`);
        assert.equal(reply.body.error.code, 'INVALID_QUERY');
      }
    }
  });

  test('page and pageSize of any length: a huge pageSize is clamped, a huge page is past the end', async () => {
    const huge = '99999999999999999999';
    const big = await app.call('GET', `${EXT}/listings?status=all&pageSize=${huge}`, { secret: writer });
    assert.equal(big.status, 200, big.text);
    assert.equal(big.body.pagination.pageSize, 200);
    for (const page of ['1234567890', huge]) {
      const past = await app.call('GET', `${EXT}/listings?status=all&page=${page}&pageSize=${huge}`, {
        secret: writer,
      });
      assert.equal(past.status, 200, past.text);
      assert.deepEqual(past.body.data, []);
      const loc = await app.call('GET', `${EXT}/locations/${tree.ids.A1}/listings?page=${page}`, {
        secret: writer,
      });
      assert.equal(loc.status, 200, loc.text);
      assert.deepEqual(loc.body.data, []);
    }
    assertInvalidQuery(await app.call('GET', `${EXT}/listings?page=0`, { secret: writer }), 'page');
  });

  test('partner answers carry Cache-Control: no-store (errors too); a listing read is private', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', `${EXT}/listings`],
      ['GET', `${EXT}/locations`],
      ['GET', `${EXT}/reference/enums`],
      ['PUT', `${EXT}/listings/${ref}`, listingBody({ dealerProfileId: tree.ids.A1 })],
      ['GET', `${EXT}/listings?stauts=x`],
    ];
    for (const [method, path, body] of paths) {
      const reply = await app.call(method, path, { secret: writer, body });
      assert.equal(reply.headers['cache-control'], 'no-store', `${method} ${path} ${reply.status}`);
    }
    const unauthenticated = await app.call('GET', `${EXT}/listings`);
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.headers['cache-control'], 'no-store');
    const one = await app.call('GET', `${EXT}/listings/${listingId}`, { secret: writer });
    assert.equal(one.headers['cache-control'], 'private, no-cache');
  });
});
