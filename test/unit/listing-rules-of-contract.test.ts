import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ENUMS, type EnumName, matchEnum } from '../../src/domain/enums.js';
import { crossFieldInputOfRaw, crossFieldIssues, resultingStatus } from '../../src/domain/listings/checks.js';
import { listingBodySchema } from '../../src/domain/listings/input.js';
import type { ExistingListing } from '../../src/store/listings/writes.js';

// The listing rules as docs/contract.md states them (#enumerations, #validation, #price-rule,
// #dealer-of-a-listing), checked against the code: the enumerations, the aliases it names, every
// numeric bound, and the cross-field rules.

/** docs/contract.md's table of enumerations: each field's values, in the order it lists them. */
function contractEnumerations(): Map<string, string[]> {
  const text = readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('### Enumerations'), text.indexOf('### Slugs and listingUrl'));
  const listed = new Map<string, string[]>();
  for (const [, field, cell] of section.matchAll(/^\| `(\w+)`[^|]*\| (.+) \|$/gm)) {
    // Only the backquoted words before a note in parentheses are values.
    listed.set(
      field!,
      [...cell!.replace(/\(.*\)/, '').matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!),
    );
  }
  return listed;
}

const schema = listingBodySchema({
  historyReportHosts: ['www.car-pass.be'],
  today: () => new Date('2026-06-15T00:00:00Z'),
});
const issues = (body: Record<string, unknown>) => {
  const parsed = schema.safeParse({ title: 'x', ...body });
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

test('the enumerations are the ones docs/contract.md lists, value for value and in order', () => {
  const listed = contractEnumerations();
  assert.deepEqual([...listed.keys()].sort(), Object.keys(ENUMS).sort(), 'every enumeration, and only those');
  for (const [name, values] of listed) {
    assert.deepEqual([...ENUMS[name as EnumName].values], values, name);
  }
});

test('the Dutch and French words docs/contract.md names are aliases of the values they mean', () => {
  const words: [EnumName, string, string][] = [
    ['fuelType', 'hybride', 'hybrid'],
    ['fuelType', 'elektrisch', 'electric'],
    ['fuelType', 'électrique', 'electric'],
    ['fuelType', 'benzine', 'petrol'],
    ['fuelType', 'gasoline', 'petrol'],
    ['transmission', 'automaat', 'automatic'],
    ['transmission', 'automatique', 'automatic'],
    ['transmission', 'handgeschakeld', 'manual'],
    ['transmission', 'manuelle', 'manual'],
    ['bodyType', 'break', 'station_wagon'],
    ['bodyType', 'cabriolet', 'convertible'],
  ];
  for (const [name, word, value] of words) assert.equal(matchEnum(name, word), value, `${name}: ${word}`);
});

test('every numeric bound of docs/contract.md: the bounds are taken, one step past them refused', () => {
  const bounds: [string, number, number, number][] = [
    // field, lowest, highest, step
    ['year', 1900, 2027, 1],
    ['mileage', 0, 2_000_000, 1],
    ['powerKw', 1, 2_000, 1],
    ['co2Emission', 0, 1_000, 0.01],
    ['weight', 1, 100_000, 1],
    ['fuelConsumption', 0, 100, 0.01],
    ['doors', 0, 10, 1],
    ['seats', 0, 100, 1],
    ['gears', 0, 20, 1],
    ['previousOwners', 0, 100, 1],
    ['warrantyMonths', 0, 240, 1],
    ['price', 0.01, 10_000_000, 0.01],
  ];
  for (const [field, low, high, step] of bounds) {
    assert.deepEqual(issues({ [field]: low }), [], `${field} = ${low}`);
    assert.deepEqual(issues({ [field]: high }), [], `${field} = ${high}`);
    assert.equal(
      issues({ [field]: Math.round((low - step) * 100) / 100 }).length,
      1,
      `${field} below ${low}`,
    );
    assert.equal(
      issues({ [field]: Math.round((high + step) * 100) / 100 }).length,
      1,
      `${field} above ${high}`,
    );
  }
});

test('description up to 20,000 characters; features up to 200; images up to 2,048 characters each', () => {
  assert.deepEqual(issues({ description: 'd'.repeat(20_000) }), []);
  assert.deepEqual(issues({ description: 'd'.repeat(20_001) }), [
    'description: must be at most 20000 characters',
  ]);
  assert.deepEqual(issues({ features: Array.from({ length: 200 }, (_, i) => `f${i}`) }), []);
  assert.deepEqual(issues({ features: Array.from({ length: 201 }, (_, i) => `f${i}`) }), [
    'features: at most 200 features',
  ]);
  const url = (n: number) => `https://i.example/${'a'.repeat(n - 'https://i.example/'.length)}`;
  assert.deepEqual(issues({ images: [url(2048)] }), []);
  assert.deepEqual(issues({ images: [url(2049)] }).length, 1);
});

test('conditionTags: at most 20, each an enumeration value', () => {
  assert.deepEqual(issues({ conditionTags: ['used', 'Accident free'] }), []);
  assert.equal(issues({ conditionTags: ['used', 'shiny'] }).length, 1);
  assert.equal(issues({ conditionTags: Array.from({ length: 21 }, () => 'used') }).length, 1);
});

const stored = (status: string) =>
  ({ id: 'l1', reference: 'R', dealerProfileId: 'd1', status }) as ExistingListing;

test('the resulting status: the one sent, else the stored one, else active', () => {
  assert.equal(resultingStatus('sold', stored('active')), 'sold');
  assert.equal(resultingStatus(undefined, stored('draft')), 'draft');
  assert.equal(resultingStatus(undefined, undefined), 'active');
});

test('a price is required when the listing will be active or pending, not sold or draft', () => {
  const input = (status: 'active' | 'pending' | 'sold' | 'draft' | undefined, hasPrice = false) => ({
    status,
    namesDealer: true,
    hasPrice,
  });
  assert.deepEqual(crossFieldIssues(input('active'), undefined, undefined), [
    { path: 'price', message: 'is required when the status is active', code: 'required' },
  ]);
  assert.deepEqual(
    crossFieldIssues(input('pending'), undefined, undefined)[0]?.message,
    'is required when the status is pending',
  );
  assert.deepEqual(crossFieldIssues(input('sold'), undefined, undefined), []);
  assert.deepEqual(crossFieldIssues(input('draft'), undefined, undefined), []);
  assert.deepEqual(crossFieldIssues(input('active', true), undefined, undefined), []);
  // No status sent: the stored one decides.
  assert.deepEqual(crossFieldIssues(input(undefined), stored('sold'), undefined), []);
  assert.equal(crossFieldIssues(input(undefined), stored('pending'), undefined).length, 1);
});

test('a dealer is required only for a new listing when the secret has no root profile to default to', () => {
  const item = { status: 'sold' as const, namesDealer: false, hasPrice: true };
  assert.deepEqual(
    crossFieldIssues(item, undefined, undefined).map((i) => [i.path, i.code]),
    [['dealerProfileId', 'required']],
  );
  assert.deepEqual(
    crossFieldIssues(item, stored('sold'), undefined),
    [],
    'an existing listing keeps its dealer',
  );
  assert.deepEqual(crossFieldIssues(item, undefined, 'root-profile'), [], 'the default dealer');
});

test('a body that failed validation still tells what it can: blank is not given, status read as an enum', () => {
  assert.deepEqual(crossFieldInputOfRaw({ status: ' SOLD ', price: 'abc', dealerLocationCode: '' }), {
    status: 'sold',
    namesDealer: false,
    hasPrice: true,
  });
  assert.deepEqual(crossFieldInputOfRaw({ status: 'gone', price: null, dealerProfileId: 'x' }), {
    status: undefined,
    namesDealer: true,
    hasPrice: false,
  });
  assert.equal(crossFieldInputOfRaw({ status: 5 }).status, undefined);
});
