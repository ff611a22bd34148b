import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IterateQuery, ListingQuery, LocationListingsQuery } from '../../packages/client/src/index.js';

/**
 * Compile-time rules of the client's types, held by `npm run typecheck` (a `@ts-expect-error` that
 * no longer finds an error fails it); the runtime part only keeps the values used.
 */
test("the status filter is a status or 'all': a misspelt one does not compile (issue 29)", () => {
  const good: [ListingQuery, IterateQuery, LocationListingsQuery] = [
    { status: 'all' },
    { status: 'sold' },
    { status: 'draft' },
  ];
  // @ts-expect-error 'actve' is not a status
  const typo: ListingQuery = { status: 'actve' };
  // @ts-expect-error nor in iterate()
  const iterateTypo: IterateQuery = { status: 'Sold ' };
  // @ts-expect-error nor for a location's listings
  const locationTypo: LocationListingsQuery = { status: 'every' };
  assert.equal(good.length + [typo, iterateTypo, locationTypo].length, 6);
});
