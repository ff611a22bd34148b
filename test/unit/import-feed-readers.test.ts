import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { readDate } from '../../packages/client/src/import/dates.js';
import {
  c1Reason,
  decode,
  decodeAs,
  encodingOption,
  legacyEncoding,
} from '../../packages/client/src/import/encoding.js';
import { readFeed } from '../../packages/client/src/import/feed.js';
import { isPriceOnRequest } from '../../packages/client/src/import/feed-values.js';
import { settings } from '../../packages/client/src/import/settings.js';
import { makeTitle, parseTitleTemplate } from '../../packages/client/src/import/title.js';

// forecourt import (docs/import.md): what a Belgian or Dutch dealer system's export holds besides
// numbers: its encoding, dates, "price on request", no title column, no location.
// Files only in a temporary directory.

const dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-unit-feed-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, bytes: string | Buffer) => {
  const at = path.join(dir, name);
  writeFileSync(at, bytes);
  return at;
};

/** Windows-1252 bytes of `text` (Python's cp1252, written out: Node.js has no encoder for it). */
const CP1252: Record<string, number> = { '€': 0x80, Š: 0x8a, Œ: 0x8c, š: 0x9a, œ: 0x9c, Ÿ: 0x9f, '’': 0x92 };
function windows1252(text: string): Buffer {
  return Buffer.from(
    [...text].map((c) => {
      const code = c.charCodeAt(0);
      if (CP1252[c] !== undefined) return CP1252[c]!;
      assert.ok(code < 0x80 || (code >= 0xa0 && code <= 0xff), `no Windows-1252 byte for ${c}`);
      return code;
    }),
  );
}
/** ISO-8859-15 bytes: € 0xA4, Š 0xA6, Œ 0xBC. */
const LATIN9: Record<string, number> = { '€': 0xa4, Š: 0xa6, š: 0xa8, Œ: 0xbc, œ: 0xbd, Ÿ: 0xbe };
const latin9 = (text: string) => Buffer.from([...text].map((c) => LATIN9[c] ?? c.charCodeAt(0)));

test('decode: UTF-8 with or without a BOM; Windows-1252 by its 0x80–0x9F letters; ISO-8859-15 by € at 0xA4', () => {
  const text = 'Škoda;€ 18.750;Citroën;Œuvre';
  assert.deepEqual(decode(Buffer.from(text)), { text, encoding: 'utf-8' });
  assert.equal(decode(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])).text, text);
  const cp = decode(windows1252(text));
  assert.equal(cp.text, text);
  assert.equal(cp.encoding, 'windows-1252');
  assert.match(cp.why!, /byte 0x8A \("Š" in Windows-1252\) is a control character in ISO-8859-15/);
  const l9 = decode(latin9(text));
  assert.equal(l9.text, text);
  assert.equal(l9.encoding, 'iso-8859-15');
  // Latin-9's Š next to a letter, with no € to tell: still ISO-8859-15 (¦koda is no word).
  assert.equal(legacyEncoding(latin9('Škoda Fabia')).encoding, 'iso-8859-15');
  // Accents alone (ë is 0xEB in both): Windows-1252, the encoding of Windows exports.
  assert.equal(legacyEncoding(Buffer.from('Citroën', 'latin1')).encoding, 'windows-1252');
  // An acute accent for an apostrophe (0xB4, Ž in Latin-9) does not make a file Latin-9.
  assert.equal(legacyEncoding(Buffer.from('Foto´s', 'latin1')).encoding, 'windows-1252');
});

test('decode: UTF-8 with a stray Windows-1252 byte is refused, not read as Windows-1252 throughout', () => {
  // A UTF-8 export with one Windows-1252 "é" (0xE9) on line 2: read as Windows-1252, every UTF-8
  // "é" (C3 A9) would become "Ã©" and "€" (E2 82 AC) "â‚¬", with no C1 character to show it.
  const mixed = Buffer.concat([
    Buffer.from('Merk;Model;Prijs\nCitroën;C4 Café;€ 12.500\nPeugeot;Caf'),
    Buffer.from([0xe9]),
    Buffer.from(';€ 9.950\n'),
  ]);
  assert.throws(
    () => decode(mixed),
    (error: Error) =>
      error.name === 'CliError' &&
      /looks like UTF-8 \(4 valid multi-byte characters\) with 1 invalid byte: the first, 0xE9, on line 3/.test(
        error.message,
      ) &&
      /fix the file, or name its encoding with --encoding/.test(error.message),
  );
  // Named, it is read as told.
  assert.equal(decode(mixed, 'windows-1252').text.split('\n')[1], 'CitroÃ«n;C4 CafÃ©;â‚¬ 12.500');
  // A Windows-1252 file (é as 0xE9, no UTF-8 sequence) is still detected as one.
  const legacy = decode(Buffer.from('Merk;Model\nCitroën;C4 Café\nRenault;Mégane\n', 'latin1'));
  assert.equal(legacy.encoding, 'windows-1252');
  assert.equal(legacy.text, 'Merk;Model\nCitroën;C4 Café\nRenault;Mégane\n');
});

test('decodeAs: every Windows-1252 letter of 0x80–0x9F, which Node.js 20 TextDecoder leaves as C1', () => {
  const bytes = Buffer.from([0x80, 0x8a, 0x8c, 0x8e, 0x92, 0x96, 0x9a, 0x9c, 0x9e, 0x9f, 0xeb, 0xe9]);
  assert.equal(decodeAs(bytes, 'windows-1252'), '€ŠŒŽ’–šœžŸëé');
  // The five bytes Windows-1252 leaves undefined stay C1 characters (and are refused later).
  assert.equal(decodeAs(Buffer.from([0x81, 0x8d]), 'windows-1252'), '\u0081\u008d');
  assert.equal(decodeAs(Buffer.from([0xa4, 0xa6]), 'iso-8859-15'), '€Š');
});

test('--encoding names: windows-1252, cp1252, utf8, latin-9; others refused', () => {
  assert.equal(encodingOption('windows-1252'), 'windows-1252');
  assert.equal(encodingOption('CP1252'), 'windows-1252');
  assert.equal(encodingOption('UTF8'), 'utf-8');
  assert.equal(encodingOption('latin-9'), 'iso-8859-15');
  assert.equal(encodingOption('ISO-8859-15'), 'iso-8859-15');
  assert.equal(encodingOption('ebcdic'), undefined);
  const s = settings(
    ['feed.csv', '--encoding', 'cp1252', '--url', 'https://x.example', '--secret', 'fc_x'],
    {},
  );
  assert.ok(s !== 'help');
  assert.equal(s.encoding, 'windows-1252');
  assert.throws(
    () =>
      settings(['feed.csv', '--encoding', 'ebcdic', '--url', 'https://x.example', '--secret', 'fc_x'], {}),
    /--encoding must be utf-8, windows-1252 \(or cp1252\) or iso-8859-15/,
  );
});

test('c1Reason: a C1 character names its code point, the encoding used and --encoding', () => {
  assert.equal(c1Reason('Škoda', 'windows-1252'), undefined);
  assert.equal(
    c1Reason('\u008akoda', 'iso-8859-15'),
    'holds U+008A, a control character (at character 1), which no listing text has: the feed was read as ' +
      'ISO-8859-15; if it was written in another encoding, say which with --encoding windows-1252 or --encoding utf-8',
  );
  assert.match(c1Reason('a\u0080', undefined)!, /a JSON feed is UTF-8/);
});

test('readDate: day first, a month alone, ISO; never month first unless --date-order says so', () => {
  const value = (cell: string, order?: 'dmy' | 'mdy' | 'ymd') => {
    const read = readDate(cell, order);
    return 'value' in read ? read.value : `refused: ${read.reason}`;
  };
  assert.equal(value('15/03/2021'), '2021-03-15');
  assert.equal(value('15-03-2021'), '2021-03-15');
  assert.equal(value('5.3.2021'), '2021-03-05');
  assert.equal(value('03/2021'), '2021-03');
  assert.equal(value('3-2021'), '2021-03');
  assert.equal(value('2021-03'), '2021-03');
  assert.equal(value('2021-03-15'), '2021-03-15');
  assert.equal(value('2021/03/15'), '2021-03-15');
  assert.equal(value('15/03/2021 00:00:00'), '2021-03-15');
  // 04/03/2021 is the 4th of March, never April 3rd.
  assert.equal(value('04/03/2021'), '2021-03-04');
  assert.equal(value('04/03/2021', 'mdy'), '2021-04-03');
  assert.equal(value('03/15/2021', 'mdy'), '2021-03-15');
  assert.match(
    value('03/15/2021'),
    /has no month 15 \(read as day\/month\/year\); if the feed writes the month first, say so with --date-order mdy/,
  );
  assert.match(value('31/02/2021'), /2021-02 has no day 31/);
  assert.equal(value('29/02/2024'), '2024-02-29');
  assert.match(value('15/03/21'), /two-digit year/);
  assert.match(value('maart 2021'), /is not a date the importer reads: write it as dd\/mm\/yyyy/);
});

test('price on request words', () => {
  for (const cell of [
    'Prijs op aanvraag',
    'PRIX SUR DEMANDE',
    'POA',
    'p.o.a.',
    'Price on request',
    'op aanvraag',
  ]) {
    assert.ok(isPriceOnRequest(cell), cell);
  }
  for (const cell of ['18.750', 'aanvraag', '€ 0', '']) assert.ok(!isPriceOnRequest(cell), cell);
});

test('title templates: fields or columns, empty ones left out; an unknown one refused with a guess', () => {
  const template = parseTitleTemplate('{brand} {model} - {Uitvoering}', ['Merk', 'Uitvoering'], (s) =>
    s.toLowerCase(),
  );
  const cells: Record<string, string> = { brand: 'Škoda', model: 'Octavia', uitvoering: 'Combi' };
  const of = (part: { field: string } | { column: string }) =>
    cells['field' in part ? part.field : part.column];
  assert.equal(makeTitle(template, of), 'Škoda Octavia - Combi');
  delete cells.uitvoering;
  assert.equal(makeTitle(template, of), 'Škoda Octavia', 'no dangling separator');
  assert.equal(
    makeTitle(template, () => undefined),
    undefined,
  );
  assert.throws(
    () => parseTitleTemplate('{brnad} {model}'),
    /\{brnad\} is neither a listing field nor a column of the feed; did you mean \{brand\}\?/,
  );
  assert.throws(() => parseTitleTemplate('Car'), /has no \{field\}/);
});

test('readFeed: a Belgian Windows-1252 export without title and location columns reads as written', () => {
  const csv = [
    "Referentie;Merk;Model;Uitvoering;Prijs;Kilometerstand;Bouwjaar;Brandstof;Transmissie;Eerste inschrijving;Foto's",
    'BE-1;Škoda;Octavia;Combi 2.0 TDI;€ 18.750;88.500;2020;Diesel;Manueel;15/03/2021;https://img.example/1.jpg|https://img.example/2.jpg',
    'BE-2;Citroën;C4;Œuvre;12.500,00;61.200 km;2019;Benzine/LPG;Automaat;03/2019;',
    'BE-3;Toyota;Yaris;;Prijs op aanvraag;10.000;2022;Hybride;CVT;31/02/2022;',
  ].join('\r\n');
  const feed = readFeed(file('be.csv', windows1252(csv)), { location: 'VDB-GENT' });
  assert.equal(feed.encoding, 'windows-1252');
  assert.deepEqual(
    feed.rows.map((r) => r.listing),
    [
      {
        externalReference: 'BE-1',
        brand: 'Škoda',
        model: 'Octavia',
        variant: 'Combi 2.0 TDI',
        price: 18750,
        mileage: 88500,
        year: 2020,
        fuelType: 'Diesel',
        transmission: 'Manueel',
        firstRegistration: '2021-03-15',
        images: ['https://img.example/1.jpg', 'https://img.example/2.jpg'],
        title: 'Škoda Octavia Combi 2.0 TDI',
        dealerLocationCode: 'VDB-GENT',
      },
      {
        externalReference: 'BE-2',
        brand: 'Citroën',
        model: 'C4',
        variant: 'Œuvre',
        price: 12500,
        mileage: 61200,
        year: 2019,
        fuelType: 'Benzine/LPG',
        transmission: 'Automaat',
        firstRegistration: '2019-03',
        title: 'Citroën C4 Œuvre',
        dealerLocationCode: 'VDB-GENT',
      },
      {
        externalReference: 'BE-3',
        brand: 'Toyota',
        model: 'Yaris',
        mileage: 10000,
        year: 2022,
        fuelType: 'Hybride',
        transmission: 'CVT',
        firstRegistration: '31/02/2022',
        status: 'draft',
        title: 'Toyota Yaris',
        dealerLocationCode: 'VDB-GENT',
      },
    ],
  );
  assert.match(feed.rows[2]!.notes!.firstRegistration!, /2022-02 has no day 31/);
  assert.equal(feed.rows[2]!.told?.code, 'PRICE_ON_REQUEST');
  const notes = feed.notes.join('\n');
  assert.match(
    notes,
    /column "Prijs": 1 row says price on request \(row 4\): imported as a draft without a price/,
  );
  assert.doesNotMatch(notes, /bi-fuel/, 'Benzine/LPG is sent as written: the service reads it');
  assert.match(notes, /the feed has no title column: titles made from "\{brand\} \{model\} \{variant\}"/);
  assert.match(notes, /--location VDB-GENT: 3 rows without a location of their own go to VDB-GENT/);
  assert.match(notes, /column "Eerste inschrijving": 1 date could not be read \(row 4\)/);

  // The same bytes read as ISO-8859-15 (--encoding): Škoda's 0x8A is U+008A, and the row is refused.
  const forced = readFeed(file('be-forced.csv', windows1252(csv)), { encoding: 'iso-8859-15' });
  assert.match(forced.rows[0]!.refused!.brand!, /U\+008A.*read as ISO-8859-15.*--encoding windows-1252/);
  assert.equal(forced.rows[2]!.refused, undefined);
});

test('readFeed: a row’s own location wins over --location; --title replaces a title column', () => {
  const csv = [
    'Referentie;Vestigingscode;Titel;Merk;Model',
    'R-1;;Old;Kia;Ceed',
    'R-2;VDB-ANTW;Old;Kia;Rio',
  ].join('\n');
  const feed = readFeed(file('own.csv', csv), { location: 'VDB-GENT', title: '{Merk} {model}!' });
  assert.deepEqual(
    feed.rows.map((r) => [r.listing.dealerLocationCode, r.listing.title]),
    [
      ['VDB-GENT', 'Kia Ceed!'],
      ['VDB-ANTW', 'Kia Rio!'],
    ],
  );
  assert.match(
    feed.notes.join('\n'),
    /titles made from --title "\{Merk\} \{model\}!" \(the title column is not used\)/,
  );
});

test('readFeed JSON: bytes that are not UTF-8 are refused with their offset; --encoding is honoured', () => {
  // Found by review (2026-11-30): a Windows-1252 JSON export read as "Citro\uFFFDn" and was sent.
  const json = '[{"externalReference":"R-1","brand":"Citroën"}]';
  const bytes = windows1252(json);
  assert.throws(() => readFeed(file('cp.json', bytes)), /not UTF-8: byte 0xEB at offset 42/);
  const named = readFeed(file('cp-named.json', bytes), { encoding: 'windows-1252' });
  assert.equal(named.rows[0]!.listing.brand, 'Citroën');
  assert.equal(readFeed(file('utf8.json', json)).rows[0]!.listing.brand, 'Citroën');
});

test('readFeed JSON: an item with a name JavaScript reserves is not sent; the others are', () => {
  // The service refuses a whole request holding one (400), which stopped the import at that
  // batch on every run.
  const json =
    '[{"externalReference":"R-1"},{"externalReference":"R-2","engine":{"__proto__":1}},{"externalReference":"R-3","constructor":{"prototype":{}}}]';
  const feed = readFeed(file('proto.json', json));
  assert.deepEqual(
    feed.rows.map((r) => r.refused && Object.keys(r.refused)),
    [undefined, ['engine.__proto__'], ['constructor']],
  );
});

test('readFeed CSV: a pipe-delimited header is detected, as docs/import.md says', () => {
  const feed = readFeed(file('pipe.csv', 'externalReference|title|brand\nR-1|Golf|Volkswagen\n'));
  assert.equal(feed.delimiter, '|');
  assert.deepEqual(feed.rows[0]!.listing, { externalReference: 'R-1', title: 'Golf', brand: 'Volkswagen' });
});
