import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LISTING_FIELDS } from '../../src/store/listings/columns.js';
import {
  GENERATED_BEGIN,
  GENERATED_END,
  LISTING_KEYS,
  readModelFunctionsSql,
} from '../../src/store/listings/json.js';
import { loadMigrations } from '../../src/store/migrate.js';

// The read shape has one owner (src/store/listings/json.ts); the SQL the database runs for it is
// generated from there. These hold the committed migrations and the owner together.

test('the newest migration holding the read model functions holds what the read shape generates', () => {
  const holding = loadMigrations().filter((m) => m.sql.includes(GENERATED_BEGIN));
  const newest = holding.at(-1);
  assert.ok(newest, `no migration holds "${GENERATED_BEGIN}"`);
  const begin = newest.sql.indexOf(GENERATED_BEGIN);
  const end = newest.sql.indexOf(`${GENERATED_END}\n`, begin);
  assert.ok(end > begin, `${newest.name}: no "${GENERATED_END}" line after the block's first`);
  assert.equal(
    newest.sql.slice(begin, end + GENERATED_END.length + 1),
    readModelFunctionsSql(),
    `${newest.name} differs from what src/store/listings/json.ts generates. The read shape changed: ` +
      'add a new migration with `npm run read-model:sql -- migrations/NNN_name.sql` and a rewrite ' +
      'of the rows after it (docs/operations.md, "The read model"); one already released is never rewritten.',
  );
});

test('every stored field of a listing is in the read shape, flat or nested in `location`', () => {
  const location = ['postalCode', 'city', 'province', 'latitude', 'longitude'];
  const keys: readonly string[] = LISTING_KEYS;
  for (const [field] of LISTING_FIELDS) {
    assert.ok(keys.includes(field) !== location.includes(field), `${field}: shown once, flat or nested`);
  }
  assert.equal(new Set(keys).size, keys.length, 'no key twice');
});
