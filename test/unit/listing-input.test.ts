import assert from 'node:assert/strict';
import { test } from 'node:test';
import { enumKey } from '../../src/domain/enums.js';
import { isValidReference, listingBodySchema, toListingWrite } from '../../src/domain/listings/input.js';
import { prepare } from '../../src/domain/listings/items.js';

// The listing write shape as pure rules: what a body becomes, and what it is refused for.
const schema = listingBodySchema({
  historyReportHosts: ['www.car-pass.be'],
  today: () => new Date('2026-06-15T00:00:00Z'),
});
const issuesOf = (body: unknown) => {
  const parsed = schema.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

test('a body becomes the flat write: aliases folded, location nested or flat, EUR by default, the rest null', () => {
  const write = toListingWrite(
    schema.parse({
      title: '  Golf  ',
      fuelType: 'Benzine',
      price: 19.99 + 0.02, // 20.009999999999998: floating-point noise, not a decimal the client wrote
      location: { city: 'Gent', latitude: 51.05 },
      postalCode: '9000',
      historyReport: '12345678901',
      images: [{ url: 'https://img.example.com/2.jpg', position: 2 }, 'https://img.example.com/1.jpg'],
      features: ['ABS', 'abs', { category: 'comfort', name: 'Heated seats' }],
      conditionTags: ['USED', 'used'],
      status: 'Sold',
    }),
  );
  assert.equal(write.values.title, 'Golf');
  assert.equal(write.values.fuelType, 'petrol');
  assert.equal(write.values.price, 20.01);
  assert.equal(write.values.currency, 'EUR');
  assert.equal(write.values.city, 'Gent');
  assert.equal(write.values.postalCode, '9000');
  assert.equal(write.values.latitude, 51.05);
  assert.equal(write.values.historyReportUrl, '12345678901');
  assert.deepEqual(write.values.images, ['https://img.example.com/1.jpg', 'https://img.example.com/2.jpg']);
  assert.deepEqual(write.values.features, [
    { category: 'other', name: 'ABS' },
    { category: 'comfort', name: 'Heated seats' },
  ]);
  assert.deepEqual(write.values.conditionTags, ['used']);
  assert.equal(write.values.mileage, null, 'a field left out is cleared (replace semantics)');
  assert.equal(write.status, 'sold');
  assert.equal(write.dealer, undefined);
});

test('each rule refuses with a message that says what it accepts', () => {
  assert.deepEqual(issuesOf({ title: 'x', year: 1850 }), [
    `year: must be between 1900 and ${new Date().getUTCFullYear() + 1}`,
  ]);
  assert.deepEqual(issuesOf({ title: 'x', currency: 'usd' }), ['currency: only EUR is supported']);
  assert.match(issuesOf({ title: 'x', vin: 'abc' })[0]!, /^vin: 17 characters/);
  assert.match(issuesOf({ title: 'x', price: 12.345 })[0]!, /^price: must have at most 2 decimals/);
  assert.match(issuesOf({ title: 'x', price: 0 })[0]!, /^price: must be greater than 0/);
  // Below the minimum however small, and decimals however far out, are refused, never cut.
  assert.match(
    issuesOf({ title: 'x', fuelConsumption: -2.5e-323 })[0]!,
    /^fuelConsumption: must be at least 0/,
  );
  assert.match(issuesOf({ title: 'x', fuelConsumption: 5.000000001 })[0]!, /must have at most 2 decimals/);
  assert.match(issuesOf({ title: 'x', price: 1e-9 })[0]!, /^price: must have at most 2 decimals/);
  // What arithmetic leaves on a 2-decimal amount is not a decimal the client wrote.
  assert.deepEqual(issuesOf({ title: 'x', price: 0.1 + 0.2, fuelConsumption: 19.99 }), []);
  assert.deepEqual(issuesOf({ title: 'x', price: 9_999_999.99, fuelConsumption: 100 }), []);
  assert.match(issuesOf({ title: 'x', firstRegistration: '2026-07' })[0]!, /must not be in the future/);
  assert.match(
    issuesOf({ title: 'x', historyReportUrl: 'https://evil.example/x' })[0]!,
    /https URL on www\.car-pass\.be/,
  );
  assert.match(issuesOf({ title: 'x', fuelType: 'steam' })[0]!, /"steam" is not allowed; allowed: petrol/);
  assert.match(issuesOf({ title: '   ' })[0]!, /^title: must not be empty/);
  assert.match(issuesOf({ title: 'x', milage: 5 })[0]!, /milage/);
  assert.deepEqual(
    issuesOf({ title: 'x', id: 'ignored', createdAt: 'ignored' }),
    [],
    'read-only fields are accepted',
  );
});

test('a reference: 1 to 128 visible characters, no control characters, no outer spaces', () => {
  for (const good of ['A', 'STOCK-2026-0042', 'é/ü 1', 'x'.repeat(128)])
    assert.ok(isValidReference(good), good);
  for (const bad of ['', ' A', 'A ', 'A\u0001B', 'x'.repeat(129), '\ud800', 7, null]) {
    assert.ok(!isValidReference(bad), JSON.stringify(bad));
  }
});

test('firstRegistration: exactly the days of the calendar up to today, as Date reads them', () => {
  // The rule counts days by arithmetic; Date, parsing and printing back, is the reference, but
  // for the year 0000 that Date has and the calendar (and PostgreSQL's date) has not.
  const isDay = (iso: string) => {
    const date = new Date(`${iso}T00:00:00Z`);
    return (
      !iso.startsWith('0000') && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === iso
    );
  };
  const years = ['0000', '0004', '0100', '1900', '1999', '2000', '2023', '2024', '2025', '2026', '2100'];
  const months = ['00', '01', '02', '04', '06', '09', '11', '12', '13'];
  const days = ['00', '01', '15', '28', '29', '30', '31', '32', '99'];
  let checked = 0;
  for (const y of years)
    for (const m of months) {
      for (const d of [...days.map((d) => `-${d}`), '']) {
        const text = `${y}-${m}${d}`;
        const iso = d ? text : `${text}-01`;
        const expected = !isDay(iso)
          ? ['firstRegistration: must be a date YYYY-MM or YYYY-MM-DD']
          : iso > '2026-06-15'
            ? ['firstRegistration: must not be in the future']
            : [];
        assert.deepEqual(issuesOf({ title: 'x', firstRegistration: text }), expected, text);
        if (expected.length === 0)
          assert.equal(schema.parse({ title: 'x', firstRegistration: ` ${text} ` }).firstRegistration, iso);
        checked++;
      }
    }
  assert.equal(checked, years.length * months.length * (days.length + 1));
  // Today is not the future; tomorrow is.
  assert.deepEqual(issuesOf({ title: 'x', firstRegistration: '2026-06-15' }), []);
  assert.deepEqual(issuesOf({ title: 'x', firstRegistration: '2026-06-16' }), [
    'firstRegistration: must not be in the future',
  ]);
  assert.match(issuesOf({ title: 'x', firstRegistration: '2019-4-01' })[0]!, /YYYY-MM or YYYY-MM-DD/);
});

test('enumerations: white space runs count as one space; past 1,000 characters a text is refused unread', () => {
  assert.equal(enumKey('Benzine \t +  LPG'), 'benzine/lpg');
  assert.equal(enumKey('Essence   et\u00a0 GPL'), 'essence/gpl');
  assert.equal(enumKey('  Plug -  in   Hybride '), 'plug_in_hybride');
  assert.deepEqual(issuesOf({ title: 'x', fuelType: ' Benzine   /  LPG ' }), []);
  // A feed's padding is read through: 120 spaces after a value, 95 between an alias's words.
  assert.equal(schema.parse({ title: 'x', fuelType: `Diesel${' '.repeat(120)}` }).fuelType, 'diesel');
  assert.equal(
    schema.parse({ title: 'x', fuelType: `Benzine${' '.repeat(95)}+ LPG` }).fuelType,
    schema.parse({ title: 'x', fuelType: 'Benzine + LPG' }).fuelType,
  );
  // A run of 100,000 spaces: refused at its field (before the change, normalizing it took minutes).
  const long = `a${' '.repeat(100_000)}b`;
  assert.deepEqual(issuesOf({ title: 'x', fuelType: long }).length, 1);
  assert.match(
    issuesOf({ title: 'x', fuelType: long })[0]!,
    /^fuelType: "a {49}" is not allowed; allowed: petrol/,
  );
});

test('URLs: trimmed, then bounded in characters and in UTF-8 bytes; a history report URL as it is kept', () => {
  const url = (path: string) => `https://img.example.com/${path}`;
  assert.deepEqual(issuesOf({ title: 'x', images: [` ${url('a.jpg')}\n`] }), []);
  assert.deepEqual(issuesOf({ title: 'x', images: [url('x'.repeat(2048 - url('').length))] }), []);
  assert.deepEqual(issuesOf({ title: 'x', images: [url('x'.repeat(2049 - url('').length))] }), [
    'images.0: must be at most 2048 characters',
  ]);
  // 700 characters, 2,100 bytes: PostgreSQL's index of image URLs would refuse past 2,704.
  assert.deepEqual(issuesOf({ title: 'x', images: [url('中'.repeat(700))] }), [
    'images.0: must be at most 2048 bytes in UTF-8',
  ]);
  assert.deepEqual(issuesOf({ title: 'x', images: [{ url: url(`a${' '.repeat(3000)}b`) }] }), [
    'images.0.url: must be at most 2048 characters',
  ]);
  assert.deepEqual(issuesOf({ title: 'x', images: [url('a\tb.jpg')] }), [
    'images.0: must be an http(s) URL without control characters',
  ]);
  // Kept percent-encoded: 1,000 "é" are 6,000 characters once kept.
  assert.deepEqual(
    issuesOf({ title: 'x', historyReportUrl: `https://www.car-pass.be/${'é'.repeat(1000)}` }),
    ['historyReportUrl: must be at most 2048 characters once percent-encoded'],
  );
  assert.equal(
    schema.parse({ title: 'x', historyReportUrl: ` https://www.car-pass.be/r/${'é'.repeat(10)} ` })
      .historyReportUrl,
    `https://www.car-pass.be/r/${'%C3%A9'.repeat(10)}`,
  );
  assert.deepEqual(issuesOf({ title: 'x', historyReportUrl: `${' '.repeat(5000)}x` }), [
    'historyReportUrl: must be an https URL on www.car-pass.be, or an 11-digit certificate number',
  ]);
});

test("an image's read-only check is not the listing's text: a listing read back is taken back", () => {
  const check = { state: 'ok', contentType: 'image/jpeg\u0085', problem: { message: 'odd\u009f' } };
  const item = {
    index: 0,
    reference: 'r1',
    body: { title: 'x', images: [{ url: 'https://img.example.com/1.jpg', check }] },
  };
  const prepared = prepare(schema, item);
  assert.ok('write' in prepared, JSON.stringify(prepared));
  assert.deepEqual(prepared.write.values.images, ['https://img.example.com/1.jpg']);
  // The listing's own text still is: a C1 character in the URL or the title is refused.
  const refused = prepare(schema, {
    ...item,
    body: { title: 'x\u0085', images: [{ url: 'https://img.example.com/\u0085' }] },
  });
  assert.ok('issues' in refused && refused.issues, JSON.stringify(refused));
  assert.deepEqual([...new Set(refused.issues.map((i) => i.path))].sort(), ['images.0.url', 'title']);
});
