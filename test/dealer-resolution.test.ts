import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  listingBody,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { bulk, put } from './helpers/listings-api.js';

/**
 * Issue 40, point 7: a global partner writing with a dealerProfileId that no dealer profile has
 * got 403 PROFILE_FORBIDDEN ("not in this API secret's access scope"), but nothing is outside a
 * global partner's scope: it is told the id (or location code) is unknown, 422 VALIDATION_FAILED
 * at the field. A restricted partner keeps 403 for both (docs/contract.md#access-scope: it cannot
 * probe which ids exist).
 */
describe('a dealer no profile has: 422 for a global partner, 403 for a restricted one', () => {
  let app: TestApp;
  let tree: Tree;
  let global: string;
  let restricted: string;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    global = (await createPartner(app, { global: true, scopes: ALL_SCOPES })).secret;
    restricted = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
  });
  after(() => app.close());

  const unknownId = randomUUID();
  const unknownCode = 'no-such-location-code';
  const cases = [
    ['dealerProfileId', { dealerProfileId: unknownId }, /no dealer profile has this id/],
    ['dealerLocationCode', { dealerLocationCode: unknownCode }, /no dealer profile has this location code/],
  ] as const;

  for (const [field, fields, message] of cases) {
    test(`global partner, unknown ${field}: 422 VALIDATION_FAILED at ${field}`, async () => {
      const reply = await put(app, global, unique('unknown-dealer'), listingBody(fields));
      assert.equal(reply.status, 422, reply.text);
      assert.equal(reply.body.error.code, 'VALIDATION_FAILED');
      assert.deepEqual(
        reply.body.error.issues.map((i: { path: string }) => i.path),
        [field],
      );
      assert.match(reply.body.error.issues[0].message, message);
      assert.match(reply.body.error.message, message);
      assert.doesNotMatch(reply.text, /access scope/);
    });

    test(`restricted partner, unknown ${field}: still 403 PROFILE_FORBIDDEN, as for one outside its scope`, async () => {
      const reply = await put(app, restricted, unique('unknown-dealer'), listingBody(fields));
      assert.equal(reply.status, 403, reply.text);
      assert.equal(reply.body.error.code, 'PROFILE_FORBIDDEN');
    });
  }

  test('bulk, global partner: the unknown items are 422 at their field, the known one is written', async () => {
    const items = [
      { externalReference: unique('b'), ...listingBody({ dealerProfileId: unknownId }) },
      { externalReference: unique('b'), ...listingBody({ dealerLocationCode: unknownCode }) },
      { externalReference: unique('b'), ...listingBody({ dealerProfileId: tree.ids.B }) },
    ];
    const reply = await bulk(app, global, items);
    assert.equal(reply.status, 200, reply.text);
    const { data } = reply.body;
    assert.deepEqual(
      data.errors.map((e: any) => [
        e.index,
        e.status,
        e.code,
        e.issues?.map((i: { path: string }) => i.path),
      ]),
      [
        [0, 422, 'VALIDATION_FAILED', ['dealerProfileId']],
        [1, 422, 'VALIDATION_FAILED', ['dealerLocationCode']],
      ],
    );
    assert.equal(data.results.length, 1);
  });

  test('bulk, restricted partner: unknown and out-of-scope items alike are 403', async () => {
    const items = [
      { externalReference: unique('b'), ...listingBody({ dealerProfileId: unknownId }) },
      { externalReference: unique('b'), ...listingBody({ dealerLocationCode: unknownCode }) },
      { externalReference: unique('b'), ...listingBody({ dealerProfileId: tree.ids.B }) },
    ];
    const reply = await bulk(app, restricted, items);
    assert.equal(reply.status, 200, reply.text);
    assert.deepEqual(
      reply.body.data.errors.map((e: any) => [e.index, e.status, e.code]),
      [
        [0, 403, 'PROFILE_FORBIDDEN'],
        [1, 403, 'PROFILE_FORBIDDEN'],
        [2, 403, 'PROFILE_FORBIDDEN'],
      ],
    );
  });
});
