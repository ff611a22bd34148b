import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { z } from 'zod';
import { ENUMS, type EnumName, enumKey, matchEnum, refusalOf } from '../../src/domain/enums.js';
import {
  caseInsensitive,
  decimal,
  enumField,
  feature,
  firstRegistration,
  historyReport,
  httpUrl,
  image,
  int,
  text,
  VIN_PATTERN,
} from '../../src/domain/listings/field-types.js';
import { listingBodySchema, READ_ONLY_FIELDS, toListingWrite } from '../../src/domain/listings/input.js';

// The value types of a listing write (docs/contract.md#validation) and the body they make up: each
// accepts what its message says, refuses the rest, and folds aliases into one value.

const ok = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `${JSON.stringify(value)}: ${parsed.error?.issues[0]?.message}`);
  return parsed.data;
};
const refused = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value);
  assert.ok(!parsed.success, `${JSON.stringify(value)} was accepted`);
  return parsed.error.issues[0]!;
};

test('text: trimmed, blank becomes null, at most the maximum', () => {
  const t = text(5);
  assert.equal(ok(t, ' ab '), 'ab', 'trimmed');
  assert.equal(ok(t, '   '), null);
  assert.equal(ok(t, null), null);
  assert.equal(ok(t, undefined), undefined);
  assert.equal(ok(t, 'abcde'), 'abcde');
  assert.equal(refused(t, 'abcdef').message, 'must be at most 5 characters');
});

test('text: U+0000 and lone surrogates are refused, not cleaned', () => {
  assert.equal(
    refused(text(50), 'a\u0000b').message,
    'must not contain U+0000 or unpaired surrogate characters',
  );
  assert.equal(
    refused(text(50), '\udc00').message,
    'must not contain U+0000 or unpaired surrogate characters',
  );
  assert.equal(ok(text(50), 'Citroën 😀'), 'Citroën 😀');
  assert.equal(refused(text(50), 5).message, 'must be a string');
});

test('int: whole numbers within the bounds, each refusal saying the range', () => {
  const doors = int(0, 10);
  assert.equal(ok(doors, 0), 0);
  assert.equal(ok(doors, 10), 10);
  assert.equal(ok(doors, null), null);
  assert.equal(refused(doors, 11).message, 'must be between 0 and 10');
  assert.equal(refused(doors, -1).message, 'must be between 0 and 10');
  assert.equal(refused(doors, 2.5).message, 'must be a whole number');
  assert.equal(refused(doors, '4').message, 'must be a number');
});

test('decimal: an exclusive minimum refuses the minimum itself, an inclusive one takes it', () => {
  assert.equal(refused(decimal(0, 100, true), 0).message, 'must be greater than 0 and at most 100');
  assert.equal(ok(decimal(0, 100, true), 0.01), 0.01);
  assert.equal(ok(decimal(0, 100), 0), 0);
  assert.equal(ok(decimal(0, 100), 100), 100);
  assert.equal(refused(decimal(0, 100), 100.01).message, 'must be at least 0 and at most 100');
});

test('decimal: at most 2 decimals; floating-point noise on a 2-decimal amount is rounded to the cent', () => {
  const d = decimal(0, 10_000_000, true);
  assert.equal(ok(d, 0.1 + 0.2), 0.3);
  assert.equal(ok(d, 1.15 * 3), 3.45);
  assert.equal(refused(d, 1.005).message, 'must have at most 2 decimals');
  assert.equal(refused(d, 19.999).message, 'must have at most 2 decimals');
  assert.equal(ok(d, 9_999_999.99), 9_999_999.99);
});

test('an enumeration: blank clears it, a value in any form is its canonical value', () => {
  const fuel = enumField('fuelType');
  assert.equal(ok(fuel, '  '), null);
  assert.equal(ok(fuel, 'Plug-in Hybrid'), 'plugin_hybrid');
  assert.equal(ok(fuel, 'ÉLECTRIQUE'), 'electric');
  assert.match(refused(fuel, 7).message, /^must be a string, one of: petrol, diesel/);
});

test('an ambiguous word is refused with the reason and the code ambiguous_value', () => {
  const issue = refused(enumField('fuelType'), 'Gas') as { message: string; params?: { code?: string } };
  assert.equal(
    issue.message,
    '"Gas" is ambiguous: it means petrol in the US but LPG in Belgium and the Netherlands; send petrol or lpg',
  );
  assert.equal(issue.params?.code, 'ambiguous_value');
  assert.match(refused(enumField('fuelType'), 'gaz').message, /send lpg or cng/);
  assert.equal(refusalOf('fuelType', 'petrol'), undefined);
});

test('an unknown value is quoted (50 characters at most) and the allowed values listed', () => {
  const long = 'x'.repeat(80);
  assert.equal(
    refused(enumField('driveType'), long).message,
    `"${'x'.repeat(50)}" is not allowed; allowed: fwd, rwd, awd`,
  );
});

test('enumKey: accents dropped, case folded, spaces and dashes become one underscore', () => {
  assert.equal(enumKey('  Plug-in  Hybride '), 'plug_in_hybride');
  assert.equal(enumKey('Électrique'), 'electrique');
  assert.equal(enumKey('Sans-Plomb'), 'sans_plomb');
});

test('every value is its own key, so matchEnum may take a value as sent without normalizing it', () => {
  let values = 0;
  for (const [name, spec] of Object.entries(ENUMS) as [EnumName, (typeof ENUMS)[EnumName]][]) {
    for (const value of spec.values as readonly string[]) {
      assert.equal(enumKey(value), value, `${name}: ${value}`);
      assert.equal(matchEnum(name, value), value);
      values++;
    }
  }
  assert.ok(values > 50, `only ${values} values`);
});

test("the names every object has are no enumeration's values, aliases or refusals", () => {
  for (const name of Object.keys(ENUMS) as EnumName[]) {
    for (const word of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      assert.equal(matchEnum(name, word), undefined, `${name}: ${word}`);
      assert.equal(refusalOf(name, word), undefined, `${name}: ${word}`);
    }
    // No refused word is a value (nor an alias): enumField may take a value before asking for a refusal.
    const words = (ENUMS[name] as { refused?: Record<string, string> }).refused ?? {};
    for (const word of Object.keys(words)) assert.equal(matchEnum(name, word), undefined, word);
  }
  assert.match(refused(enumField('fuelType'), 'constructor').message, /"constructor" is not allowed/);
});

test('matchEnum: a value without its underscores, aliases with digits, nothing else', () => {
  assert.equal(matchEnum('emissionClass', 'Euro 6d-TEMP'), 'euro6d_temp');
  assert.equal(matchEnum('emissionClass', 'EURO6DTEMP'), 'euro6d_temp');
  assert.equal(matchEnum('bodyType', 'StationWagon'), 'station_wagon');
  assert.equal(matchEnum('driveType', '4x4'), 'awd');
  assert.equal(matchEnum('driveType', '4WD'), 'awd');
  assert.equal(matchEnum('status', 'sold out'), undefined);
  assert.equal(matchEnum('co2Type', ''), undefined);
});

test('every alias leads to a value of its own enumeration, and no alias is itself a value', () => {
  for (const [name, spec] of Object.entries(ENUMS) as [EnumName, (typeof ENUMS)[EnumName]][]) {
    const values = spec.values as readonly string[];
    for (const [alias, value] of Object.entries(spec.aliases as Record<string, string>)) {
      assert.ok(values.includes(value), `${name}.${alias} → ${value}`);
      assert.ok(!values.includes(alias), `${name}: ${alias} is a value and an alias`);
      assert.equal(matchEnum(name, alias), value, `${name}.${alias}`);
    }
  }
});

test('no refused word of an enumeration is also one of its values or aliases', () => {
  for (const [name, spec] of Object.entries(ENUMS)) {
    const refusedWords = Object.keys((spec as { refused?: Record<string, string> }).refused ?? {});
    for (const word of refusedWords) {
      assert.equal(matchEnum(name as EnumName, word), undefined, `${name}: ${word}`);
    }
  }
});

test('caseInsensitive: a pattern for the words in any case with outer spaces, nothing more', () => {
  const pattern = new RegExp(caseInsensitive(['true', 'false']));
  for (const good of ['true', 'TRUE', ' False ', 'tRuE']) assert.match(good, pattern);
  for (const bad of ['truee', 'yes', 't rue', '']) assert.doesNotMatch(bad, pattern);
  // Other characters are escaped, not read as pattern syntax.
  assert.doesNotMatch('aXb', new RegExp(caseInsensitive(['a.b'])));
  assert.match('A.B', new RegExp(caseInsensitive(['a.b'])));
});

test('httpUrl: an http or https URL with a host, trimmed; other schemes refused', () => {
  assert.equal(ok(httpUrl, ' https://img.example.com/1.jpg '), 'https://img.example.com/1.jpg');
  assert.equal(ok(httpUrl, 'http://img.example.com'), 'http://img.example.com');
  for (const bad of [
    'ftp://img.example.com/1.jpg',
    'img.example.com/1.jpg',
    'javascript:alert(1)',
    'https://',
    // The URL parser would drop a tab or line break silently: the URL stored would not be the one sent.
    'https://img.example.com/a\tb.jpg',
    'https://img.example.com/a\nb.jpg',
  ]) {
    assert.equal(refused(httpUrl, bad).message, 'must be an http(s) URL without control characters', bad);
  }
  assert.equal(
    refused(httpUrl, `https://x.example/${'a'.repeat(2048)}`).message,
    'must be at most 2048 characters',
  );
});

test('an image is a URL or {url, position}; other members are refused', () => {
  assert.equal(ok(image, 'https://img.example.com/1.jpg'), 'https://img.example.com/1.jpg');
  assert.deepEqual(ok(image, { url: 'https://img.example.com/1.jpg', position: 0 }), {
    url: 'https://img.example.com/1.jpg',
    position: 0,
  });
  refused(image, { url: 'https://img.example.com/1.jpg', caption: 'front' });
  refused(image, { url: 'https://img.example.com/1.jpg', position: -1 });
});

test('a feature: a name alone is in category other; names and categories must not be empty', () => {
  assert.deepEqual(ok(feature, ' ABS '), { category: 'other', name: 'ABS' });
  assert.deepEqual(ok(feature, { category: 'comfort', name: 'Heated seats' }), {
    category: 'comfort',
    name: 'Heated seats',
  });
  refused(feature, '  ');
  refused(feature, { category: '', name: 'x' });
  refused(feature, 'x'.repeat(201));
});

test('a VIN: 17 characters without I, O or Q', () => {
  assert.match('WVWZZZ1JZXW000001', VIN_PATTERN);
  for (const bad of [
    'WVWZZZ1JZXW00000I',
    'WVWZZZ1JZXW00000O',
    'WVWZZZ1JZXW00000Q',
    'WVWZZZ1JZXW00001',
    'wvwzzz1jzxw000001',
  ]) {
    assert.doesNotMatch(bad, VIN_PATTERN, bad);
  }
});

const today = () => new Date('2026-06-15T12:00:00Z');

test('first registration: a month means its first day; impossible dates are refused', () => {
  const first = firstRegistration(today);
  assert.equal(ok(first, '2019-03'), '2019-03-01');
  assert.equal(ok(first, ' 2020-02-29 '), '2020-02-29');
  for (const bad of ['2021-02-29', '2019-13', '2019-3', '03/2019', '2019-03-01T00:00:00Z']) {
    assert.equal(refused(first, bad).message, 'must be a date YYYY-MM or YYYY-MM-DD', bad);
  }
});

test('first registration: today is allowed, tomorrow and next month are in the future', () => {
  const first = firstRegistration(today);
  assert.equal(ok(first, '2026-06-15'), '2026-06-15');
  assert.equal(ok(first, '2026-06'), '2026-06-01');
  assert.equal(refused(first, '2026-06-16').message, 'must not be in the future');
  assert.equal(refused(first, '2026-07').message, 'must not be in the future');
});

test('a history report: an 11-digit certificate or an https URL on an allowed host', () => {
  const report = historyReport(['www.car-pass.be', 'car-pass.be']);
  assert.equal(ok(report, '12345678901'), '12345678901');
  assert.equal(ok(report, ''), null);
  assert.equal(ok(report, 'https://WWW.Car-Pass.be/nl/check?id=1'), 'https://www.car-pass.be/nl/check?id=1');
  const message = 'must be an https URL on www.car-pass.be or car-pass.be, or an 11-digit certificate number';
  for (const bad of [
    '1234567890',
    'http://www.car-pass.be/x',
    'https://car-pass.be.evil.example/x',
    'car-pass.be/x',
  ]) {
    assert.equal(refused(report, bad).message, message, bad);
  }
});

const schema = listingBodySchema({
  historyReportHosts: ['www.car-pass.be'],
  today: () => new Date('2026-06-15T00:00:00Z'),
});
const write = (body: Record<string, unknown>) => toListingWrite(schema.parse({ title: 'x', ...body }));
const issues = (body: Record<string, unknown>) => {
  const parsed = schema.safeParse({ title: 'x', ...body });
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

test('year: from 1900 to next year, as the today given says', () => {
  assert.equal(write({ year: 1900 }).values.year, 1900);
  assert.equal(write({ year: 2027 }).values.year, 2027);
  assert.deepEqual(issues({ year: 2028 }), ['year: must be between 1900 and 2027']);
  assert.deepEqual(issues({ year: 1999.5 }), ['year: must be a whole number']);
});

test('title is required, at most 200 characters after trimming', () => {
  assert.deepEqual(issues({ title: undefined }), ['title: is required and must be a string']);
  assert.equal(write({ title: ` ${'t'.repeat(200)} ` }).values.title, 't'.repeat(200));
  assert.deepEqual(issues({ title: 't'.repeat(201) }), ['title: must be at most 200 characters']);
});

test('currency: EUR in any case; a left-out currency is EUR', () => {
  assert.equal(write({ currency: ' eur ' }).values.currency, 'EUR');
  assert.equal(write({}).values.currency, 'EUR');
  assert.deepEqual(issues({ currency: 'GBP' }), ['currency: only EUR is supported']);
});

test('vin: upper-cased and trimmed; empty clears it', () => {
  assert.equal(write({ vin: ' wvwzzz1jzxw000001 ' }).values.vin, 'WVWZZZ1JZXW000001');
  assert.equal(write({ vin: '' }).values.vin, null);
});

test('the flat location wins over the nested one, field by field', () => {
  const values = write({
    city: 'Gent',
    location: { city: 'Brugge', province: 'West-Vlaanderen', longitude: 3.2 },
  }).values;
  assert.deepEqual([values.city, values.province, values.longitude], ['Gent', 'West-Vlaanderen', 3.2]);
  assert.deepEqual(issues({ latitude: 90.1 }).length, 1);
  assert.deepEqual(issues({ location: { town: 'Gent' } }).length, 1, 'the nested location is strict too');
});

test('history report aliases: the canonical name first, then historyReport, history_report_url, historyReportNumber', () => {
  assert.equal(
    write({ historyReport: '11111111111', historyReportNumber: '22222222222' }).values.historyReportUrl,
    '11111111111',
  );
  assert.equal(
    write({ historyReportUrl: '33333333333', historyReport: '11111111111' }).values.historyReportUrl,
    '33333333333',
  );
  assert.equal(write({ historyReportNumber: '22222222222' }).values.historyReportUrl, '22222222222');
});

test('images are ordered by position, a URL alone taking its index; at most 50', () => {
  const values = write({
    images: [
      'https://i.example/a.jpg',
      { url: 'https://i.example/b.jpg', position: 0 },
      'https://i.example/c.jpg',
    ],
  }).values;
  // a: position 0 (its index), b: 0, c: 2; the sort is stable, so a stays before b.
  assert.deepEqual(values.images, [
    'https://i.example/a.jpg',
    'https://i.example/b.jpg',
    'https://i.example/c.jpg',
  ]);
  assert.deepEqual(issues({ images: Array.from({ length: 51 }, () => 'https://i.example/a.jpg') }), [
    'images: at most 50 images',
  ]);
});

test('features are deduplicated by category and name ignoring case; the first spelling stays', () => {
  assert.deepEqual(
    write({
      features: [
        'Navigation',
        { category: 'OTHER', name: 'navigation' },
        { category: 'comfort', name: 'Navigation' },
      ],
    }).values.features,
    [
      { category: 'other', name: 'Navigation' },
      { category: 'comfort', name: 'Navigation' },
    ],
  );
});

test('the dealer: a profile id (lower-cased) wins over a location code; neither keeps the current', () => {
  const id = '3F0C2A8E-5B1D-4C6E-9A7F-1D2E3F4A5B6C';
  assert.deepEqual(write({ dealerProfileId: id, dealerLocationCode: 'GENT' }).dealer, {
    id: id.toLowerCase(),
  });
  assert.deepEqual(write({ dealerLocationCode: ' GENT ' }).dealer, { code: 'GENT' });
  assert.equal(write({}).dealer, undefined);
  assert.deepEqual(issues({ dealerProfileId: 'gent' }), ['dealerProfileId: must be a UUID']);
});

test('status: undefined keeps the current one; a given one is folded to its value', () => {
  assert.equal(write({}).status, undefined);
  assert.equal(write({ status: ' DRAFT ' }).status, 'draft');
});

test('every read-only field of the read shape is accepted and none is written', () => {
  const body = Object.fromEntries(READ_ONLY_FIELDS.map((name) => [name, 'from a read']));
  const values = write(body).values as Record<string, unknown>;
  for (const name of READ_ONLY_FIELDS) assert.equal(name in values, false, name);
});

test('an unknown field is refused, never dropped', () => {
  assert.equal(issues({ colour: 'red' }).length, 1);
  assert.match(issues({ colour: 'red' })[0]!, /colour/);
});
