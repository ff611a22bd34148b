import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { foldName } from '../../packages/client/src/import/column-names.js';
import {
  closestField,
  convert,
  fieldNamed,
  kindOf,
  mapColumns,
  rowToListing,
} from '../../packages/client/src/import/columns.js';
import { CliError } from '../../packages/client/src/import/errors.js';
import type { Feed } from '../../packages/client/src/import/feed.js';
import { certain, numberFormatOption, proves, readings } from '../../packages/client/src/import/numbers.js';
import { applyValueMap, readValueMap } from '../../packages/client/src/import/value-map.js';

// forecourt import (docs/import.md), cell by cell: numbers' two readings, booleans, lists and
// coordinates, the header's columns, and --map's value maps. Files only in a temporary directory.

const dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-unit-import-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
};

test('--number-format takes exactly 1.234,56 or 1,234.56', () => {
  assert.equal(numberFormatOption('1.234,56'), 'comma');
  assert.equal(numberFormatOption('1,234.56'), 'dot');
  for (const other of ['comma', 'dot', '1234,56', '1 234,56', ''])
    assert.equal(numberFormatOption(other), undefined, other);
});

test('readings: a cell both formats read alike is certain; read differently, it is not', () => {
  assert.deepEqual(readings('19950', 'decimal'), { comma: 19950, dot: 19950 });
  assert.equal(certain(readings('19950', 'decimal')), 19950);
  assert.deepEqual(readings('39.990', 'decimal'), { comma: 39990, dot: 39.99 });
  assert.equal(certain(readings('39.990', 'decimal')), undefined);
  assert.equal(proves(readings('39.990', 'decimal')), undefined);
});

test('proves: a cell only one format reads proves that format for its column', () => {
  assert.equal(proves(readings('12.500,00', 'decimal')), 'comma');
  assert.equal(proves(readings('1,234,567', 'integer')), 'dot');
  assert.equal(proves(readings('19950.50', 'decimal')), 'dot');
  assert.equal(proves(readings('19950', 'decimal')), undefined, 'both read it alike: no proof');
});

test('an integer field takes only whole readings: 61.200 km is 61200, never 61.2', () => {
  assert.deepEqual(readings('61.200 km', 'integer', 'mileage'), { comma: 61200 });
  assert.deepEqual(readings('61.200 km', 'decimal', 'mileage'), { comma: 61200, dot: 61.2 });
});

test('a thousands group is three digits after a first group of one to three not starting with 0', () => {
  assert.deepEqual(readings('01.234', 'decimal'), { dot: 1.234 });
  assert.deepEqual(readings('1234.567', 'decimal'), { dot: 1234.567 });
  assert.deepEqual(readings('1.2345', 'decimal'), { dot: 1.2345 });
  assert.deepEqual(readings('1.234 567', 'decimal'), {}, 'one separator for every group');
});

test('a unit is read before or after the number, in any case, and only the field’s own', () => {
  assert.equal(certain(readings('EUR 18.750,50', 'decimal', 'price')), 18750.5);
  assert.equal(certain(readings('18.750,50 euros', 'decimal', 'price')), 18750.5);
  assert.equal(certain(readings('1.250 KG', 'integer', 'weight')), 1250);
  assert.equal(certain(readings('5,4 l/100 km', 'decimal', 'fuelConsumption')), 5.4);
  assert.equal(certain(readings('119 g/km', 'decimal', 'co2Emission')), 119);
  assert.deepEqual(readings('1.250 kg', 'integer', 'mileage'), {}, 'kg is no mileage unit');
});

test('thin, narrow and figure spaces separate thousands like a space', () => {
  for (const space of ['\u2009', '\u202f', '\u2007']) {
    assert.equal(certain(readings(`21${space}500`, 'integer', 'mileage')), 21500, JSON.stringify(space));
  }
});

test('booleans: yes and no in English, Dutch and French, and x for a ticked box', () => {
  for (const yes of ['true', 'Yes', 'Y', '1', 'JA', 'oui', 'x'])
    assert.equal(convert('boolean', yes), true, yes);
  for (const no of ['false', 'No', 'n', '0', 'Nee', 'NON']) assert.equal(convert('boolean', no), false, no);
  assert.equal(convert('boolean', 'misschien'), 'misschien', 'left for the service to refuse');
});

test('a list cell is split on |, trimmed, empty items dropped', () => {
  assert.deepEqual(convert('list', ' ABS | Navigatie ||  Cruise control '), [
    'ABS',
    'Navigatie',
    'Cruise control',
  ]);
  assert.deepEqual(convert('list', ' | '), []);
});

test('a coordinate takes a decimal point or comma, never thousands', () => {
  assert.equal(convert('coordinate', '4,350'), 4.35);
  assert.equal(convert('coordinate', '-51.0543'), -51.0543);
  assert.equal(convert('coordinate', '51'), 51);
  assert.equal(convert('coordinate', '4.350.100'), '4.350.100');
  assert.equal(convert('coordinate', '51° N'), '51° N');
});

test('text stays as written, spaces included', () => {
  assert.equal(convert('text', '  VW Golf  '), '  VW Golf  ');
});

test('foldName: accents, case and punctuation off; a bracketed unit only when it is a field unit', () => {
  assert.equal(foldName('Prijs (€)'), 'prijs');
  assert.equal(foldName('Vermogen [kW]'), 'vermogen');
  assert.equal(foldName('Verbruik (l/100 km)'), 'verbruik');
  assert.equal(foldName('Vermogen (pk)'), 'vermogenpk');
  assert.equal(foldName('CO₂-uitstoot'), 'co2uitstoot');
  assert.equal(foldName('Année'), 'annee');
});

test('fieldNamed: the write shape’s names in any spelling; not the Dutch or French ones', () => {
  assert.equal(fieldNamed('fuel_type'), 'fuelType');
  assert.equal(fieldNamed('EXTERNAL-REFERENCE'), 'externalReference');
  assert.equal(fieldNamed('Brandstof'), undefined);
  assert.equal(kindOf('mileage'), 'integer');
  assert.equal(kindOf('price'), 'decimal');
  assert.equal(kindOf('nope'), undefined);
});

test('closestField: two edits at most, else a field a shortened name begins', () => {
  assert.equal(closestField('milage'), 'mileage');
  assert.equal(closestField('pric'), 'price');
  assert.equal(closestField('externalRef'), 'externalReference');
  assert.equal(closestField('xyzzy'), undefined);
  assert.equal(closestField('ab'), undefined);
});

test('mapColumns: two columns meaning one field are refused, naming both and how to ignore one', () => {
  assert.throws(
    () => mapColumns(['Referentie', 'Titel', 'Prijs', 'price']),
    (error: unknown) =>
      error instanceof CliError &&
      error.message ===
        'columns "Prijs" and "price" are both price: keep one of them, or ignore one with --columns FILE ({"price": null})',
  );
});

test('mapColumns: a feed without a reference column is refused, showing its header; no title column is fine', () => {
  assert.throws(
    () => mapColumns(['Titel', 'Prijs']),
    /^CliError: the feed has no externalReference column \(header: Titel, Prijs\)/,
  );
  // Titles are then made from brand, model and variant (import-feed-readers.test.ts).
  assert.deepEqual(mapColumns(['Referentie', 'Prijs']).fields, ['externalReference', 'price']);
  assert.throws(() => mapColumns([]), /\(header: empty\)/);
});

test('mapColumns: unknown columns are listed as ignored, blank header cells are not', () => {
  const columns = mapColumns(['Referentie', '', 'Titel', 'Interne notitie']);
  assert.deepEqual(columns.fields, ['externalReference', undefined, 'title', undefined]);
  assert.deepEqual(columns.ignored, ['Interne notitie']);
});

test('rowToListing: empty cells left out, numbers kept as text for their column, the rest converted', () => {
  const columns = mapColumns(['Referentie', 'Titel', 'Prijs', 'Kilometerstand', 'Garantie', 'Opties']);
  assert.deepEqual(rowToListing(columns, ['S-1', 'Golf', '39.990', '', 'ja', 'ABS|GPS']), {
    externalReference: 'S-1',
    title: 'Golf',
    price: '39.990',
    warranty: true,
    features: ['ABS', 'GPS'],
  });
});

test('--map: keys match cells ignoring case and outer spaces; other cells are left as they are', () => {
  const map = readValueMap(
    file('map.json', JSON.stringify({ fuelType: { ' Stoom ': 'other', BZ: 'petrol' } })),
  );
  const feed = {
    format: 'csv',
    sha256: '',
    rows: [
      { row: 2, listing: { fuelType: 'stoom' } },
      { row: 3, listing: { fuelType: '  bz ' } },
      { row: 4, listing: { fuelType: 'diesel' } },
      { row: 5, listing: { fuelType: 7 } },
    ],
  } as unknown as Feed;
  assert.equal(applyValueMap(feed, map), 2);
  assert.deepEqual(
    feed.rows.map((r) => r.listing.fuelType),
    ['other', 'petrol', 'diesel', 7],
  );
});

test('--map: a field that is no listing field is refused, with a guess', () => {
  const at = file('typo.json', JSON.stringify({ fuelTyp: { BZ: 'petrol' } }));
  assert.throws(
    () => readValueMap(at),
    (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.equal(error.message, `--map ${at}: "fuelTyp" is not a listing field; did you mean "fuelType"?`);
      return true;
    },
  );
});

test('--map: the file must be a JSON object of objects of strings', () => {
  const cases: [string, RegExp][] = [
    ['[]', /expected a JSON object of fields/],
    ['{"fuelType": ["petrol"]}', /"fuelType" must map feed values to values/],
    ['{"fuelType": {"BZ": 1}}', /fuelType\."BZ" must be a string/],
    ['{"fuelType": ', /^CliError: --map .*bad.json: /],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => readValueMap(file('bad.json', text)), message, text);
  }
});

test('--map: a file with a byte order mark reads; bytes that are not UTF-8 are refused with their offset', () => {
  const bom = path.join(dir, 'bom-map.json');
  writeFileSync(
    bom,
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"fuelType": {"BZ": "petrol"}}')]),
  );
  assert.equal(readValueMap(bom).get('fuelType')?.get('bz'), 'petrol');
  const latin = path.join(dir, 'latin-map.json');
  writeFileSync(latin, Buffer.from('{"fuelType": {"\xc9lectrique": "electric"}}', 'latin1'));
  assert.throws(() => readValueMap(latin), /not UTF-8: byte 0xC9 at offset 15/);
});
