import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listingsQuery } from '../../src/api/external/v1/listings/query-schema.js';
import { booleanParam, dateTimeParam } from '../../src/api/schemas/query.js';
import { matchEnum } from '../../src/domain/enums.js';
import { makeSlug } from '../../src/domain/slug.js';
import { closestName, unknownNameMessage } from '../../src/domain/suggest.js';

// Query parameters, enumerations, slugs and "did you mean": pure rules, no service.

test('query aliases resolve to one name; the canonical one wins', () => {
  const q = listingsQuery.parse({
    page_number: '2',
    page_size: '20',
    updated_since: '2026-01-01',
    parentId: 'a0a0a0a0-0000-4000-8000-000000000001',
  });
  assert.equal(q.page, 2);
  assert.equal(q.pageSize, 20);
  assert.equal(q.updatedSince?.toISOString(), '2026-01-01T00:00:00.000Z');
  assert.equal(q.parentDealerId, 'a0a0a0a0-0000-4000-8000-000000000001');
  const both = listingsQuery.parse({ pageSize: '10', limit: '99' });
  assert.equal(both.pageSize, 10);
  assert.equal(listingsQuery.parse({ status: ' ALL ' }).status, 'all');
});

test('booleans take true/false/1/0 in any case; dates take the documented forms and refuse impossible days', () => {
  for (const [raw, value] of [
    ['TRUE', true],
    ['0', false],
    [' false ', false],
    ['1', true],
  ] as const) {
    assert.equal(booleanParam.parse(raw), value, raw);
  }
  assert.ok(!booleanParam.safeParse('yes').success);
  assert.equal(dateTimeParam.parse('2026-11-22 10:00:00 01:00').toISOString(), '2026-11-22T09:00:00.000Z');
  // A space between date and time, no offset: UTC (the document's pattern allows it, so the
  // parser must not read the time as an offset; found by Stoplight Prism).
  assert.equal(dateTimeParam.parse('2026-11-26 02:00').toISOString(), '2026-11-26T02:00:00.000Z');
  assert.equal(dateTimeParam.parse('2026-11-26 02:00 01:00').toISOString(), '2026-11-26T01:00:00.000Z');
  assert.equal(dateTimeParam.parse('2026-11-26T02:00:30.5 0100').toISOString(), '2026-11-26T01:00:30.500Z');
  assert.ok(!dateTimeParam.safeParse('2021-02-30').success);
  assert.ok(!dateTimeParam.safeParse('yesterday').success);
});

test('enumerations: values in any case and with any separator, aliases, accents forgiven', () => {
  assert.equal(matchEnum('fuelType', 'Plug-in Hybrid'), 'plugin_hybrid');
  assert.equal(matchEnum('fuelType', 'pluginhybrid'), 'plugin_hybrid');
  assert.equal(matchEnum('fuelType', 'EV'), 'electric');
  assert.equal(matchEnum('fuelType', 'Électrique'), matchEnum('fuelType', 'electrique'));
  assert.equal(matchEnum('fuelType', 'steam'), undefined);
});

test('transmission: CVT and dual-clutch gearboxes (DSG, S tronic) are automatic; a clutchless manual is semi-automatic', () => {
  for (const word of [
    'CVT',
    'e-CVT',
    'DSG',
    'dsg',
    'DCT',
    'EDC',
    'S tronic',
    'S-Tronic',
    'PDK',
    'Tiptronic',
  ]) {
    assert.equal(matchEnum('transmission', word), 'automatic', word);
  }
  assert.equal(matchEnum('transmission', 'Semi-automaat'), 'semi_automatic');
  assert.equal(matchEnum('transmission', 'Halfautomaat'), 'semi_automatic');
});

test('slugs: lowercase ASCII words, accents dropped, a random suffix, never empty', () => {
  const slug = makeSlug(['Škoda', 'Octavia Combi', null, 2019]);
  assert.match(slug, /^skoda-octavia-combi-2019-[a-z0-9]{8}$/);
  assert.notEqual(makeSlug(['Golf']), makeSlug(['Golf']));
  assert.match(makeSlug([]), /^listing-[a-z0-9]{8}$/);
  assert.ok(makeSlug(['x'.repeat(200)]).length <= 80 + 9);
});

test('did you mean: close names only, canonical before aliases', () => {
  assert.equal(closestName('milage', ['mileage', 'make']), 'mileage');
  assert.equal(closestName('stauts', ['status']), 'status');
  assert.equal(closestName('xyz', ['mileage', 'status']), undefined);
  assert.equal(
    unknownNameMessage('field', 'prcie', ['price']),
    'is not a known field; did you mean `price`?',
  );
  assert.equal(closestName('y'.repeat(500), ['mileage']), undefined);
});
