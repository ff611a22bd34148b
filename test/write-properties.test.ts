import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { bootApp, createTree, listingBody, type TestApp, type Tree } from './helpers/app.js';
import { bulk, getListing, put, setStatus } from './helpers/listings-api.js';
import { ref, SPEC_ENUMS, writer } from './helpers/write-fixtures.js';

/** An image's check before the first check (docs/images.md). */
const PENDING_CHECK = {
  state: 'pending',
  checkedAt: null,
  format: null,
  width: null,
  height: null,
  bytes: null,
  contentType: null,
  problem: null,
};

/**
 * Property-based tests of the write API: generated from the documented bounds and enumerations
 * (docs/contract.md#validation, #enumerations), run against the real service over HTTPS.
 */

let app: TestApp;
let tree: Tree;
let secret: string; // restricted to root A: the default dealer
let aliases: Record<string, Record<string, string>>;

before(async () => {
  app = await bootApp();
  tree = await createTree(app);
  secret = (await writer(app, [tree.ids.A!])).secret;
  const reply = await app.call('GET', '/api/external/v1/reference/enums', { secret });
  assert.equal(reply.status, 200, reply.text);
  aliases = Object.fromEntries(
    Object.entries(reply.body.data).map(([k, v]: [string, any]) => [k, v.aliases]),
  );
});
after(() => app.close());

const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const YESTERDAY = new Date(Date.now() - 86_400_000);
type Pair = [sent: unknown, expected: unknown];

/** Text the service must store as sent (trimmed; blank means null). */
const text = (max: number, blank = true) =>
  fc
    .oneof(
      { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: Math.min(max, 40) }) },
      { weight: 1, arbitrary: fc.constant(`${'x'.repeat(max - 2)} \t`) },
      { weight: 1, arbitrary: fc.constant('  padded  ') },
    )
    .filter((s) => s.length <= max && !s.includes('\u0000') && (blank || s.trim() !== ''))
    .map((s): Pair => [s, s.trim() || null]);

const int = (min: number, max: number) => fc.integer({ min, max }).map((n): Pair => [n, n]);
const cents = (minCents: number, maxCents: number) =>
  fc.integer({ min: minCents, max: maxCents }).map((c): Pair => [c / 100, c / 100]);
/** A spelling the documentation promises to accept: any case, dashes or spaces for underscores. */
const spelling = (value: string) =>
  fc.constantFrom(value, value.toUpperCase(), value.replace(/_/g, '-'), ` ${value.replace(/_/g, ' ')} `);
const enumValue = (name: string) =>
  fc.oneof(
    fc.constantFrom(...SPEC_ENUMS[name]!).chain((v) => spelling(v).map((s): Pair => [s, v])),
    ...(Object.keys(aliases[name]!).length
      ? [fc.constantFrom(...Object.entries(aliases[name]!)).map(([a, v]): Pair => [a.toUpperCase(), v])]
      : []),
  );
const VIN_CHARS = [...'ABCDEFGHJKLMNPRSTUVWXYZ0123456789abcdefghjklmnprstuvwxyz'];

function validListing() {
  const optional = {
    description: text(20_000),
    currency: fc.constantFrom('EUR', 'eur', ' Eur ').map((c): Pair => [c, 'EUR']),
    brand: text(100),
    model: text(100),
    variant: text(200),
    year: int(1900, NEXT_YEAR),
    mileage: int(0, 2_000_000),
    color: text(100),
    interiorColor: text(100),
    engine: text(200),
    doors: int(0, 10),
    seats: int(0, 100),
    gears: int(0, 20),
    previousOwners: int(0, 100),
    powerKw: int(1, 2_000),
    weight: int(1, 100_000),
    warrantyMonths: int(0, 240),
    co2Emission: cents(0, 100_000),
    fuelConsumption: cents(0, 10_000),
    serviceHistory: fc.boolean().map((b): Pair => [b, b]),
    warranty: fc.boolean().map((b): Pair => [b, b]),
    ...Object.fromEntries(
      [
        'fuelType',
        'transmission',
        'bodyType',
        'interiorMaterial',
        'paintType',
        'co2Type',
        'emissionClass',
        'driveType',
        'vehicleType',
      ].map((name) => [name, enumValue(name)]),
    ),
    conditionTags: fc
      .uniqueArray(fc.constantFrom(...SPEC_ENUMS.conditionTags!), { maxLength: 8 })
      .chain((tags) => fc.tuple(...tags.map((t) => spelling(t))).map((sent): Pair => [sent, tags])),
    vin: fc
      .string({ unit: fc.constantFrom(...VIN_CHARS), minLength: 17, maxLength: 17 })
      .map((v): Pair => [v, v.toUpperCase()]),
    firstRegistration: fc
      .tuple(
        fc.date({ min: new Date('1950-01-01T00:00:00Z'), max: YESTERDAY, noInvalidDate: true }),
        fc.boolean(),
      )
      .map(([d, monthOnly]): Pair => {
        const iso = d.toISOString().slice(0, 10);
        return monthOnly ? [iso.slice(0, 7), `${iso.slice(0, 7)}-01`] : [iso, iso];
      }),
    images: fc
      .array(fc.webUrl({ validSchemes: ['http', 'https'] }), { maxLength: 50 })
      // Read back with each image's check, pending: the test service runs no image checker.
      .map((urls): Pair => [urls, urls.map((url, position) => ({ url, position, check: PENDING_CHECK }))]),
    features: fc
      .uniqueArray(
        fc.oneof(
          text(200, false).map(([s]) => s as string),
          fc.record({ category: text(100, false), name: text(200, false) }).map((f) => ({
            category: f.category[0] as string,
            name: f.name[0] as string,
          })),
        ),
        {
          maxLength: 6,
          selector: (f) =>
            typeof f === 'string'
              ? `other\u0000${f.trim().toLowerCase()}`
              : `${f.category.trim().toLowerCase()}\u0000${f.name.trim().toLowerCase()}`,
        },
      )
      .map(
        (fs): Pair => [
          fs,
          fs.map((f) =>
            typeof f === 'string'
              ? { category: 'other', name: f.trim() }
              : { category: f.category.trim(), name: f.name.trim() },
          ),
        ],
      ),
  };
  const location = fc.record(
    {
      postalCode: text(20),
      city: text(100),
      province: text(100),
      latitude: fc.double({ min: -90, max: 90, noNaN: true }).map((n): Pair => [n + 0, n + 0]),
      longitude: fc.double({ min: -180, max: 180, noNaN: true }).map((n): Pair => [n + 0, n + 0]),
    },
    { requiredKeys: [] },
  );
  const history = fc.oneof(
    fc.stringMatching(/^\d{11}$/).map((n): Pair => [n, n]),
    fc
      .tuple(
        fc.constantFrom('www.car-pass.be', 'car-pass.be', 'WWW.Car-Pass.BE'),
        fc.stringMatching(/^[a-z0-9]{0,12}$/),
      )
      .map(([host, path]): Pair => [`https://${host}/${path}`, `https://${host.toLowerCase()}/${path}`]),
  );
  return fc.record(
    {
      title: text(200, false),
      price: cents(1, 1_000_000_000),
      status: fc.constantFrom(...SPEC_ENUMS.status!).chain((s) => spelling(s).map((sent): Pair => [sent, s])),
      keepPrice: fc.boolean(),
      fields: fc.record(optional, { requiredKeys: [] }),
      location,
      nestLocation: fc.boolean(),
      history: fc.option(
        fc.tuple(
          fc.constantFrom('historyReportUrl', 'historyReport', 'history_report_url', 'historyReportNumber'),
          history,
        ),
        { nil: undefined },
      ),
      dealer: fc.constantFrom('none', 'A1-id', 'A2-code'),
    },
    { requiredKeys: ['title', 'price', 'keepPrice', 'fields', 'location', 'nestLocation', 'dealer'] },
  );
}

type Generated = ReturnType<typeof validListing> extends fc.Arbitrary<infer T> ? T : never;

/** The PUT body and the fields GET must show for it. */
function build(g: Generated): { body: Record<string, unknown>; expected: Record<string, unknown> } {
  const body: Record<string, unknown> = { title: g.title[0] };
  const expected: Record<string, unknown> = { title: g.title[1] };
  const status = (g.status?.[1] as string | undefined) ?? 'active';
  // The price may be left out only where the resulting status does not need one.
  const withPrice = g.keepPrice || status === 'active' || status === 'pending';
  if (withPrice) body.price = g.price[0];
  expected.price = withPrice ? g.price[1] : null;
  if (g.status) body.status = g.status[0];
  expected.status = status;
  for (const [key, [sent, value]] of Object.entries(g.fields) as [string, Pair][]) {
    body[key] = sent;
    expected[key] = value;
  }
  const loc = Object.fromEntries(Object.entries(g.location).map(([k, v]) => [k, (v as Pair)[0]]));
  if (g.nestLocation) body.location = loc;
  else Object.assign(body, loc);
  expected.location = Object.fromEntries(
    ['postalCode', 'city', 'province', 'latitude', 'longitude'].map((k) => [
      k,
      (g.location as Record<string, Pair>)[k]?.[1] ?? null,
    ]),
  );
  // Shown only when provided.
  if (g.history) {
    body[g.history[0]] = g.history[1][0];
    expected.historyReportUrl = g.history[1][1];
  }
  if (g.dealer === 'A1-id') body.dealerProfileId = tree.ids.A1!.toUpperCase();
  if (g.dealer === 'A2-code') body.dealerLocationCode = ` ${tree.codes.A2!.toUpperCase()} `;
  expected.dealerProfileId = { none: tree.ids.A, 'A1-id': tree.ids.A1, 'A2-code': tree.ids.A2 }[g.dealer];
  return { body, expected };
}

describe('write properties', () => {
  test('any valid listing round-trips: PUT then GET shows the normalised values; a resend is a no-op', async () => {
    await fc.assert(
      fc.asyncProperty(validListing(), async (g) => {
        const { body, expected } = build(g);
        const r = ref('prop');
        const created = await put(app, secret, r, body);
        assert.equal(created.status, 201, `${created.text}\n${JSON.stringify(body)}`);
        assert.equal(created.body.data.status, expected.status);
        const got = await getListing(app, secret, created.body.data.listingId);
        for (const [key, value] of Object.entries(expected)) assert.deepEqual(got[key], value, key);
        assert.equal('historyReportUrl' in got, g.history !== undefined);
        assert.equal('soldAt' in got, expected.status === 'sold');
        const again = await put(app, secret, r, body);
        assert.equal(again.status, 200, again.text);
        assert.equal(again.body.data.outcome, 'unchanged', JSON.stringify(body));
      }),
      { numRuns: 60 },
    );
  });

  test('a valid listing with one field made invalid is always 422 naming that field', async () => {
    const long = (n: number) => 'x'.repeat(n);
    const wrongTypes = ['12', true, {}, [], 'a\u0000', '\ud800'];
    // [min, max, kind]: whole numbers, amounts with at most 2 decimals, or any number.
    const numeric: Record<string, [number, number, 'int' | 'cents' | 'float']> = {
      price: [0.01, 10_000_000, 'cents'],
      year: [1900, NEXT_YEAR, 'int'],
      mileage: [0, 2_000_000, 'int'],
      powerKw: [1, 2_000, 'int'],
      co2Emission: [0, 1_000, 'cents'],
      weight: [1, 100_000, 'int'],
      fuelConsumption: [0, 100, 'cents'],
      doors: [0, 10, 'int'],
      seats: [0, 100, 'int'],
      gears: [0, 20, 'int'],
      previousOwners: [0, 100, 'int'],
      warrantyMonths: [0, 240, 'int'],
      latitude: [-90, 90, 'float'],
      longitude: [-180, 180, 'float'],
    };
    const bad: Record<string, unknown[]> = {
      title: ['', '   ', long(201), null, 5, ['x'], 'a\u0000b'],
      description: [long(20_001), 5, { a: 1 }, '\udc00'],
      brand: [long(101), 7, ['Audi']],
      variant: [long(201), false],
      postalCode: [long(21), 9000],
      city: [long(101), {}],
      currency: ['USD', 5, 'EURO'],
      status: ['archived', 5, ['active']],
      vin: ['WBA8E9C50GK12345O', 'WBA8E9C50GK12345', 'WBA8E9C50GK1234567', 'WBA8E9C50GK12345Q', 5],
      firstRegistration: ['2099-01', '2020-13', '2020-02-30', '20-01-01', 20200101, `${NEXT_YEAR + 1}-01-01`],
      historyReportUrl: ['http://car-pass.be/x', 'https://x.example/', '123', 12345678901],
      images: ['https://img.example/1.jpg', ['ftp://x'], [5], [`https://x.example/${long(2048)}`]],
      features: [
        'abs',
        [5],
        [''],
        [{ category: '', name: 'x' }],
        [{ name: 'x' }],
        Array(201)
          .fill('f')
          .map((f, i) => f + i),
      ],
      conditionTags: ['used', ['nope'], [5]],
      serviceHistory: ['yes', 1, 'true'],
      dealerProfileId: ['not-a-uuid', 5],
      location: ['Gent', { city: 5 }, { latitude: 100 }, [1]],
      ...Object.fromEntries(
        [
          'fuelType',
          'transmission',
          'bodyType',
          'driveType',
          'vehicleType',
          'emissionClass',
          'co2Type',
          'paintType',
          'interiorMaterial',
        ].map((name) => [name, ['zz-not-a-value', 7, ['petrol'], {}]]),
      ),
      ...Object.fromEntries(
        Object.entries(numeric).map(([name, [min, max, kind]]) => {
          const step = kind === 'int' ? 1 : 0.01;
          const fraction = { int: [min + 0.5], cents: [1.234], float: [] }[kind];
          return [name, [min - step, max + step, ...fraction, ...wrongTypes]];
        }),
      ),
    };
    const mutation = fc
      .constantFrom(...Object.keys(bad))
      .chain((field) => fc.constantFrom(...bad[field]!).map((value) => ({ field, value })));
    await fc.assert(
      fc.asyncProperty(validListing(), mutation, async (g, { field, value }) => {
        const { body } = build(g);
        body[field] = value;
        const reply = await put(app, secret, ref('inv'), body);
        assert.equal(reply.status, 422, `${field}=${JSON.stringify(value)} → ${reply.text}`);
        assert.equal(reply.body.error.code, 'VALIDATION_FAILED');
        const paths = reply.body.error.issues.map((i: { path: string }) => i.path.split('.')[0]);
        assert.ok(paths.includes(field), `${field}: ${JSON.stringify(reply.body.error.issues)}`);
      }),
      { numRuns: 100 },
    );
  });

  /** One character: mostly any Unicode grapheme, sometimes what databases and JSON find awkward. */
  const charUnit = fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff', '\u001f', ' ', '\\', '"') },
  );
  const jsonValue = fc.jsonValue({ maxDepth: 3, stringUnit: charUnit });
  const FIELD_NAMES = [
    ...Object.keys(listingBody()),
    ...['status', 'price', 'images', 'features', 'location', 'conditionTags', 'firstRegistration', 'vin'],
    ...[
      'dealerProfileId',
      'dealerLocationCode',
      'historyReportUrl',
      'externalReference',
      'items',
      'latitude',
    ],
  ];
  const listingLike = fc.dictionary(fc.constantFrom(...FIELD_NAMES), jsonValue, { maxKeys: 8 });

  test('any string in a text field is stored as sent (trimmed) or refused with 422, never a 5xx', async () => {
    const textFields = ['title', 'description', 'brand', 'model', 'variant', 'color', 'engine', 'city'];
    const anyText = fc.string({ unit: charUnit, minLength: 1, maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...textFields), anyText, async (field, value) => {
        const reply = await put(app, secret, ref('text'), listingBody({ [field]: value }));
        assert.ok(reply.status === 201 || reply.status === 422, `${JSON.stringify(value)} → ${reply.text}`);
        if (reply.status === 422) {
          assert.deepEqual(
            reply.body.error.issues.map((i: { path: string }) => i.path),
            [field],
          );
          return;
        }
        const got = await getListing(app, secret, reply.body.data.listingId);
        const shown = field === 'city' ? got.location.city : got[field];
        assert.equal(shown, value.trim() || null);
      }),
      { numRuns: 80 },
    );
  });

  test('arbitrary JSON as a body never produces a 5xx', async () => {
    // Mostly invalid, so also merged onto a valid listing: then some bodies reach the database.
    const nearValid = listingLike.map((fields) => ({ ...listingBody(), ...fields }));
    const anyBody = fc.oneof(jsonValue, listingLike, nearValid, fc.array(nearValid, { maxLength: 3 }));
    await fc.assert(
      fc.asyncProperty(
        anyBody,
        fc.constantFrom('put', 'bulk', 'bulk-items', 'status'),
        async (body, where) => {
          const r = ref('fuzz');
          const reply =
            where === 'put'
              ? await put(app, secret, r, body)
              : where === 'status'
                ? await setStatus(app, secret, r, body)
                : await bulk(app, secret, where === 'bulk' ? body : { items: [body] });
          assert.ok(reply.status < 500, `${where} ${JSON.stringify(body)} → ${reply.text}`);
          assert.ok([200, 201, 400, 403, 404, 422].includes(reply.status), reply.text);
          if (reply.status >= 400) assert.equal(typeof reply.body.error.code, 'string', reply.text);
          else if (where.startsWith('bulk'))
            for (const e of reply.body.data.errors)
              assert.ok(e.status >= 400 && e.status < 500, JSON.stringify(e));
        },
      ),
      { numRuns: 150 },
    );
  });
});
