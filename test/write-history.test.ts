import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bootApp, createTree, EXT, listingBody, type TestApp, type Tree } from './helpers/app.js';
import { bulk, put, remove, setStatus } from './helpers/listings-api.js';
import { sql } from './helpers/read-fixtures.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * Each write records its listings' status history in its own statements (store/listings/writes.ts)
 * and returns the listing's new version with them, without reading it again: the history must
 * still get exactly one row per status entered or dealer moved to, and the ETag each write answers
 * must be the one a GET then gives, on every path (created, changed, unchanged, moved).
 */
describe('status history and ETags of every write path', () => {
  let app: TestApp;
  let tree: Tree;
  let secret: string;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    ({ secret } = await writer(app, [tree.ids.A!]));
  });
  after(() => app.close());

  const history = async (reference: string) =>
    (
      await sql(
        app,
        `SELECT h.status, h.dealer_profile_id::text AS dealer FROM listing_status_history h
         JOIN listings l ON l.id = h.listing_id WHERE l.external_reference = $1 ORDER BY h.id`,
        [reference],
      )
    ).map((h) => `${h.status}@${Object.entries(tree.ids).find(([, id]) => id === h.dealer)?.[0]}`);

  /** The ETag GET /listings/{id} gives now. */
  const etagOf = async (id: string) => {
    const reply = await app.call('GET', `${EXT}/listings/${id}`, { secret });
    assert.equal(reply.status, 200, reply.text);
    return reply.headers.etag;
  };
  const patch = (reference: string, body: unknown) =>
    app.call('PATCH', `${EXT}/listings/${encodeURIComponent(reference)}`, { secret, body });
  const statusDryRun = (reference: string, status: string) =>
    app.call('POST', `${EXT}/listings/${encodeURIComponent(reference)}/status?dryRun=true`, {
      secret,
      body: { status },
    });

  test('a single listing through PUT, PATCH, status changes and DELETE', async () => {
    const r = ref('hist');
    const a1 = tree.ids.A1!;
    const steps: [
      string,
      () => Promise<{ status: number; headers: Record<string, unknown>; body: any }>,
      string,
      string[],
    ][] = [
      ['PUT new', () => put(app, secret, r, listingBody({ dealerProfileId: a1 })), 'created', ['active@A1']],
      [
        'PUT changed',
        () => put(app, secret, r, listingBody({ dealerProfileId: a1, mileage: 10 })),
        'updated',
        [],
      ],
      [
        'PUT unchanged',
        () => put(app, secret, r, listingBody({ dealerProfileId: a1, mileage: 10 })),
        'unchanged',
        [],
      ],
      [
        'PUT dry run',
        () => put(app, secret, r, listingBody({ status: 'draft' }), { query: '?dryRun=true' }),
        'would_update',
        [],
      ],
      [
        'PUT status',
        () => put(app, secret, r, listingBody({ mileage: 10, status: 'pending' })),
        'updated',
        ['pending@A1'],
      ],
      [
        'PUT dealer',
        () => put(app, secret, r, listingBody({ mileage: 10, dealerProfileId: tree.ids.A2 })),
        'updated',
        ['pending@A2'],
      ],
      ['PUT keeps both', () => put(app, secret, r, listingBody({ mileage: 11 })), 'updated', []],
      ['PATCH content', () => patch(r, { mileage: 12 }), 'updated', []],
      ['PATCH unchanged', () => patch(r, { mileage: 12 }), 'unchanged', []],
      ['PATCH status', () => patch(r, { status: 'draft' }), 'updated', ['draft@A2']],
      ['status same', () => setStatus(app, secret, r, { status: 'draft' }), 'unchanged', []],
      ['status dry run', () => statusDryRun(r, 'active'), 'would_update', []],
      ['status', () => setStatus(app, secret, r, { status: 'active' }), 'updated', ['active@A2']],
      ['DELETE', () => remove(app, secret, r), 'updated', ['sold@A2']],
      ['DELETE again', () => remove(app, secret, r), 'unchanged', []],
    ];
    const expected: string[] = [];
    let id = '';
    for (const [name, write, outcome, added] of steps) {
      const reply = await write();
      assert.ok(
        reply.status === 200 || reply.status === 201,
        `${name}: ${reply.status} ${JSON.stringify(reply.body)}`,
      );
      assert.equal(reply.body.data.outcome, outcome, name);
      id ||= reply.body.data.listingId;
      expected.push(...added);
      assert.deepEqual(await history(r), expected, name);
      assert.equal(reply.headers.etag, await etagOf(id), `${name}: the ETag answered is the one GET gives`);
    }
  });

  test('a bulk upsert: new, changed, unchanged, moved and re-statused listings at once', async () => {
    const [kept, changed, moved, statused, fresh] = ['k', 'c', 'm', 's', 'f'].map((p) => ref(`bh-${p}`)) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const a1 = tree.ids.A1!;
    const first = await bulk(
      app,
      secret,
      [kept, changed, moved, statused].map((r) => ({
        externalReference: r,
        ...listingBody({ dealerProfileId: a1 }),
      })),
    );
    assert.equal(first.body.data.errorCount, 0, first.text);
    const second = await bulk(app, secret, [
      { externalReference: kept, ...listingBody({ dealerProfileId: a1 }) },
      { externalReference: changed, ...listingBody({ dealerProfileId: a1, mileage: 5 }) },
      { externalReference: moved, ...listingBody({ dealerProfileId: tree.ids.A1a }) },
      { externalReference: statused, ...listingBody({ status: 'sold' }) },
      { externalReference: fresh, ...listingBody({ dealerProfileId: a1, status: 'draft' }) },
    ]);
    assert.equal(second.body.data.errorCount, 0, second.text);
    assert.deepEqual(
      Object.fromEntries(second.body.data.results.map((x: any) => [x.externalReference, x.outcome])),
      {
        [kept]: 'unchanged',
        [changed]: 'updated',
        [moved]: 'updated',
        [statused]: 'updated',
        [fresh]: 'created',
      },
    );
    assert.deepEqual(await history(kept), ['active@A1']);
    assert.deepEqual(await history(changed), ['active@A1']);
    assert.deepEqual(await history(moved), ['active@A1', 'active@A1a']);
    assert.deepEqual(await history(statused), ['active@A1', 'sold@A1']);
    assert.deepEqual(await history(fresh), ['draft@A1']);
    // A dry run records nothing.
    const dry = await bulk(
      app,
      secret,
      [
        { externalReference: ref('bh-dry'), ...listingBody({ dealerProfileId: a1 }) },
        { externalReference: kept, ...listingBody({ status: 'draft' }) },
      ],
      '?dryRun=true',
    );
    assert.equal(dry.body.data.errorCount, 0, dry.text);
    assert.deepEqual(await history(kept), ['active@A1']);
  });
});
