import assert from 'node:assert/strict';
import type { Queryable } from '../../src/store/db.js';
import { listingJsonProjection, listingJsonSql } from '../../src/store/listings/json.js';
import { LISTING_JOINS } from '../../src/store/listings/rows.js';
import { readModelStore } from '../../src/store/read-model.js';

const BASE = 'https://cars.example/listings';

/** JSON text with its strings blanked out: what is left must hold no white space (compact JSON). */
export function assertCompact(text: string, label: string): void {
  const outside = text.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  assert.doesNotMatch(outside, /\s/, `${label}: white space outside strings in ${text.slice(0, 200)}`);
}

/**
 * The read model is right: the check finds no drift (every listing's and dealer's stored text
 * equals the text built fresh from the columns), and every listing as pages splice it (stored
 * listing text, stored dealer text, the partner's current name, the configured URL) is, byte for
 * byte, the document built fresh from the columns (the builder pages used before the read model).
 */
export async function assertReadModel(db: Queryable, label: string): Promise<number> {
  const drift = await readModelStore(db).check();
  assert.deepEqual(
    { listings: drift.driftedListings, dealers: drift.driftedDealers },
    { listings: [], dealers: [] },
    `${label}: stored text differs from a fresh build`,
  );
  const stored = listingJsonProjection(BASE);
  const rows = await db.query<{ id: string; json: string; fresh: string }>(
    'TestReadModelSplice',
    `SELECT l.id, ${stored.columns}, ${listingJsonSql(BASE)} AS fresh FROM listings l ${LISTING_JOINS}`,
  );
  for (const row of rows) {
    assert.equal(row.json, row.fresh, `${label}: listing ${row.id} as a page splices it`);
    assertCompact(row.json, label);
  }
  const dealers = await db.query<{ read_json: string }>(
    'TestReadModelDealers',
    'SELECT read_json FROM dealer_profiles',
  );
  for (const d of dealers) assertCompact(d.read_json, `${label} (dealer)`);
  return rows.length;
}
