import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  type TestApp,
  type Tree,
} from './helpers/app.js';
import { qs, type Seeded, seedListings } from './helpers/read-fixtures.js';

/**
 * A restricted partner's pages are read dealer by dealer and merged (store/listings/reads.ts,
 * pageSource); deep pages fall back to one scan. Either way a page must be exactly the slice of
 * the whole ordered list: checked here against the order computed from the seeded rows.
 */
describe('list pages of a partner with several dealers', () => {
  let app: TestApp;
  let tree: Tree;
  let secret: string;
  let seeded: Seeded[];

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    const writer = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    secret = writer.secret;
    const start = Date.UTC(2026, 5, 1);
    const dealers = ['A', 'A1', 'A1a', 'A2'];
    const statuses = ['active', 'active', 'pending', 'sold', 'draft'];
    // Several listings share an updatedAt, so the id tiebreak is exercised too.
    seeded = await seedListings(
      app,
      writer.secret,
      tree.ids,
      Array.from({ length: 60 }, (_, i) => ({
        dealer: dealers[(i * 7) % 4]!,
        status: statuses[(i * 3) % 5]!,
        price: 1000 + i,
        updatedAt: new Date(start + Math.floor(i / 3) * 60_000),
      })),
    );
  });
  after(() => app.close());

  test('every page equals the slice of the ordered list, for every status, direction and size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('active', 'pending', 'sold', 'draft', 'all'),
        fc.constantFrom('updatedAt', '-updatedAt'),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 1, max: 8 }),
        async (status, sort, pageSize, page) => {
          const dir = sort === 'updatedAt' ? 1 : -1;
          const expected = seeded
            .filter((s) => status === 'all' || s.status === status)
            .sort((a, b) => dir * (a.updatedAt.getTime() - b.updatedAt.getTime() || (a.id < b.id ? -1 : 1)))
            .map((s) => s.id);
          const res = await app.call('GET', `${EXT}/listings${qs({ status, sort, pageSize, page })}`, {
            secret,
          });
          assert.equal(res.status, 200, res.text);
          const ids = res.body.data.map((l: { id: string }) => l.id);
          assert.deepEqual(ids, expected.slice((page - 1) * pageSize, page * pageSize));
          assert.equal(res.body.pagination.totalItems, expected.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});
