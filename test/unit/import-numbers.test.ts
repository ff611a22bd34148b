import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { readColumnsFile } from '../../packages/client/src/import/column-file.js';
import { convert, mapColumns } from '../../packages/client/src/import/columns.js';
import { readNumberColumn } from '../../packages/client/src/import/number-columns.js';
import { readings } from '../../packages/client/src/import/numbers.js';

/** Issue 29: what a Belgian dealer system exports, read as the dealer meant it, or refused with why. */
describe('forecourt import: numbers', () => {
  test('thousands separators, a decimal comma, ",-", currency signs and units are read when certain', () => {
    const read = (cell: string, kind: 'integer' | 'decimal', field: string) => convert(kind, cell, field);
    assert.equal(read('12.500,00', 'decimal', 'price'), 12500);
    assert.equal(read('17.990,-', 'decimal', 'price'), 17990);
    assert.equal(read('21 500', 'decimal', 'price'), 21500);
    assert.equal(read('21\u00a0500', 'decimal', 'price'), 21500);
    assert.equal(read('€ 18.750,50', 'decimal', 'price'), 18750.5);
    assert.equal(read('18.750 EUR', 'decimal', 'price'), '18.750 EUR', 'still two readings without a proof');
    assert.equal(read('19,950.50', 'decimal', 'price'), 19950.5);
    assert.equal(read('19950.50', 'decimal', 'price'), 19950.5);
    assert.equal(read('1.234.567', 'decimal', 'price'), 1234567);
    assert.equal(read('12,5', 'decimal', 'price'), 12.5);
    assert.equal(read('61.200 km', 'integer', 'mileage'), 61200, 'a mileage is whole: 61.2 is no reading');
    assert.equal(read('110 kW', 'integer', 'powerKw'), 110);
    assert.equal(read('150 pk', 'integer', 'powerKw'), '150 pk', 'horsepower is not kW');
    assert.equal(read('15.000 km', 'decimal', 'price'), '15.000 km', 'a price has no km');
    assert.equal(read('-5', 'decimal', 'price'), -5, 'the service refuses it with its own reason');
    assert.equal(read('1.23.456', 'decimal', 'price'), '1.23.456');
    assert.equal(read('0.500', 'decimal', 'price'), 0.5, 'no thousands group starts with 0');
  });

  test('ambiguous alone: 39.990, 120.000, 1,234', () => {
    assert.deepEqual(readings('39.990', 'decimal', 'price'), { comma: 39990, dot: 39.99 });
    assert.deepEqual(readings('120.000', 'integer', 'mileage'), { comma: 120000, dot: 120 });
    assert.deepEqual(readings('1,234', 'decimal'), { comma: 1.234, dot: 1234 });
    assert.equal(convert('decimal', '39.990', 'price'), '39.990');
    assert.equal(convert('integer', '120.000', 'mileage'), '120.000');
  });

  const cells = (...texts: string[]) => texts.map((text, i) => ({ index: i, row: i + 2, text }));
  const column = (kind: 'integer' | 'decimal', ...texts: string[]) => ({
    name: 'Prijs',
    field: kind === 'decimal' ? 'price' : 'mileage',
    kind,
    cells: cells(...texts),
  });

  test("the column's other values decide an ambiguous one", () => {
    const comma = readNumberColumn(column('decimal', '39.990', '12.500,00', '19950'));
    assert.deepEqual(
      [...comma.values],
      [
        [0, 39990],
        [1, 12500],
        [2, 19950],
      ],
    );
    assert.equal(comma.refused.size, 0);
    assert.match(comma.note!, /numbers read as 1\.234,56, as row 3: "12\.500,00" shows/);

    const dots = readNumberColumn(column('decimal', '1.234.567', '120.000'));
    assert.deepEqual(
      [...dots.values],
      [
        [0, 1234567],
        [1, 120000],
      ],
    );

    const dot = readNumberColumn(column('decimal', '39.990', '19950.50'));
    assert.deepEqual(
      [...dot.values],
      [
        [0, 39.99],
        [1, 19950.5],
      ],
    );

    const km = readNumberColumn(column('integer', '120.000', '61.200 km'));
    assert.deepEqual(
      [...km.values],
      [
        [0, 120000],
        [1, 61200],
      ],
    );
  });

  test('without a proof an ambiguous value is refused with a reason naming --number-format', () => {
    const result = readNumberColumn(column('decimal', '39.990', '21 500', '19950'));
    assert.deepEqual(
      [...result.values],
      [
        [1, 21500],
        [2, 19950],
      ],
    );
    assert.match(
      result.refused.get(0)!,
      /could be 39990 \(1\.234,56\) or 39\.99 \(1,234\.56\).*--number-format 1\.234,56 or --number-format 1,234\.56/,
    );
    assert.match(result.note!, /1 value could be read two ways \(rows 2\)/);
  });

  test('a column that contradicts itself is refused wherever a separator is read', () => {
    const result = readNumberColumn(column('decimal', '12.500,00', '19950.50', '39.990', '18000'));
    assert.deepEqual([...result.values], [[3, 18000]]);
    assert.equal(result.refused.size, 3);
    assert.match(
      result.refused.get(2)!,
      /mixes 1\.234,56 \(row 2: "12\.500,00"\) and 1,234\.56 \(row 3: "19950\.50"\).*--number-format/,
    );
  });

  test('--number-format decides, and refuses what it does not read', () => {
    const comma = readNumberColumn(column('decimal', '39.990', '19950.50', '12,5'), 'comma');
    assert.deepEqual(
      [...comma.values],
      [
        [0, 39990],
        [2, 12.5],
      ],
    );
    assert.match(comma.refused.get(1)!, /is not a number written 1\.234,56 \(--number-format\)/);
    const dot = readNumberColumn(column('decimal', '39.990', '12.500,00'), 'dot');
    assert.deepEqual([...dot.values], [[0, 39.99]]);
    assert.ok(dot.refused.has(1));
  });
});

describe('forecourt import: column names', () => {
  test('Dutch and French names, any case, accents or none', () => {
    const header = ['Referentie', 'Titel', 'Prijs', 'Kilometerstand', 'Bouwjaar', 'Brandstof', 'Merk'];
    assert.deepEqual(mapColumns(header).fields, [
      'externalReference',
      'title',
      'price',
      'mileage',
      'year',
      'fuelType',
      'brand',
    ]);
    const french = [
      'Référence',
      'TITRE',
      'Prix (€)',
      'Kilométrage',
      'Annee',
      'Carburant',
      'Boîte de vitesses',
    ];
    assert.deepEqual(mapColumns(french).fields, [
      'externalReference',
      'title',
      'price',
      'mileage',
      'year',
      'fuelType',
      'transmission',
    ]);
    const more = [
      'reference',
      'title',
      "Foto's",
      'Eerste inschrijving',
      'Première immatriculation ',
      'Vermogen (kW)',
      'Vermogen (pk)',
      'Chassisnummer',
      'Carrosserie',
      'Kleur',
      'Omschrijving',
      'Deuren',
      'Zitplaatsen',
      'Versnellingsbak',
      'Modèle',
      'Dealer Location Code',
    ];
    assert.deepEqual(mapColumns(more.filter((n) => !n.startsWith('Première'))).fields, [
      'externalReference',
      'title',
      'images',
      'firstRegistration',
      'powerKw',
      undefined,
      'vin',
      'bodyType',
      'color',
      'description',
      'doors',
      'seats',
      'transmission',
      'model',
      'dealerLocationCode',
    ]);
  });

  test('--columns: a system’s own names, null to ignore; an unknown field is refused by name', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-columns-'));
    try {
      const file = path.join(dir, 'columns.json');
      writeFileSync(
        file,
        JSON.stringify({ 'Stock nr': 'externalReference', Omschrijving: null, PK: 'power_kw' }),
      );
      const custom = readColumnsFile(file);
      assert.deepEqual(mapColumns(['STOCK NR', 'Titel', 'Omschrijving', 'pk'], custom).fields, [
        'externalReference',
        'title',
        undefined,
        'powerKw',
      ]);
      writeFileSync(file, JSON.stringify({ Kenteken: 'licencePlate' }));
      assert.throws(
        () => readColumnsFile(file),
        /column "Kenteken" is mapped to "licencePlate", which is not a listing field/,
      );
      writeFileSync(file, JSON.stringify({ Prys: 'pric' }));
      assert.throws(() => readColumnsFile(file), /did you mean "price"\?/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
