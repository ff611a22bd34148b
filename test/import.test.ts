import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { convert, mapColumns } from '../packages/client/src/import/columns.js';
import { CliError } from '../packages/client/src/import/errors.js';
import { decode, detectDelimiter } from '../packages/client/src/import/feed.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { baseEnv } from './helpers/base-env.js';
import { startFlakyProxy } from './helpers/flaky-proxy.js';

/**
 * `forecourt import` as a partner runs it: the real CLI in its own process, against the real
 * service over HTTPS (through a proxy where a network failure is needed).
 */
const BIN = path.resolve(import.meta.dirname, '../bin/forecourt.js');

let app: TestApp;
let tree: Tree;
let dir: string;
let caFile: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `forecourt import <args>`; `onStderr` sees its progress output as it comes. */
function runImport(
  args: string[],
  options: {
    url?: string;
    secret: string;
    onStderr?: (text: string, child: ChildProcess) => void;
    /** false: run without --ca, as a partner who forgot it. */
    ca?: false;
  },
): Promise<Run> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'import',
      ...args,
      '--url',
      options.url ?? app.url,
      '--secret',
      options.secret,
      ...(options.ca === false ? [] : ['--ca', caFile]),
    ],
    { env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk;
    options.onStderr?.(stderr, child);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** The report, read the way a partner's spreadsheet would. */
function readReport(file: string): string[][] {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.startsWith('\uFEFF'), 'the report starts with a BOM for spreadsheet programs');
  return parse(text, { bom: true }) as string[][];
}

/** This partner's listings by reference (GET /listings?mine=true: the API reads by reference no other way). */
async function mine(secret: string): Promise<Map<string, any>> {
  const out = new Map<string, any>();
  for (let page = 1; ; page++) {
    const reply = await app.call(
      'GET',
      `/api/external/v1/listings?mine=true&status=all&pageSize=200&page=${page}`,
      {
        secret,
      },
    );
    assert.equal(reply.status, 200, reply.text);
    for (const listing of reply.body.data) out.set(listing.externalReference, listing);
    if (reply.body.data.length < 200) return out;
  }
}

/** Windows-1252 bytes of `text` (Node.js has no encoder for it): its letters of 0x80–0x9F, else Latin-1. */
function windows1252(text: string): Buffer {
  const high: Record<string, number> = { '€': 0x80, Š: 0x8a, Œ: 0x8c, š: 0x9a, œ: 0x9c, Ÿ: 0x9f };
  return Buffer.from(
    [...text].map((c) => {
      const code = c.charCodeAt(0);
      if (high[c] !== undefined) return high[c]!;
      assert.ok(code < 0x80 || (code >= 0xa0 && code <= 0xff), `no Windows-1252 byte for ${c}`);
      return code;
    }),
  );
}

function feedFile(name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** A semicolon CSV of `count` valid listings at `location`: REF-1 … REF-count. */
function stockCsv(prefix: string, location: string, count: number, from = 1): string {
  const rows = Array.from(
    { length: count },
    (_, i) => `${prefix}-${from + i};${location};Car ${from + i};${10000 + i}`,
  );
  return ['externalReference;dealerLocationCode;title;price', ...rows].join('\n');
}

before(async () => {
  // Short, so that --mark-missing-sold's cursor read settles fast; long enough that a 100-item bulk on
  // PGlite, on a machine busy with another test pass, finishes inside it (200 ms did not, in CI).
  app = await bootApp({ WRITE_TX_TIMEOUT_MS: '1000' });
  tree = await createTree(app);
  dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-import-'));
  caFile = path.join(app.dataDir, 'tls', 'localhost-cert.pem');
});
after(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('forecourt import: reading a feed', () => {
  test('Windows-1252 or ISO-8859-15 is detected when the bytes are not UTF-8; a UTF-8 BOM is dropped', () => {
    assert.deepEqual(decode(Buffer.from('Citroën €', 'utf8')), { text: 'Citroën €', encoding: 'utf-8' });
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('title', 'utf8')]);
    assert.equal(decode(bom).text, 'title');
    // "Citroën 9 €" in ISO-8859-15: ë is 0xEB, € is 0xA4.
    const latin9 = Buffer.from([0x43, 0x69, 0x74, 0x72, 0x6f, 0xeb, 0x6e, 0x20, 0x39, 0x20, 0xa4]);
    assert.equal(decode(latin9).text, 'Citroën 9 €');
    assert.equal(decode(latin9).encoding, 'iso-8859-15');
    // The same in Windows-1252: € is 0x80 (a control character in ISO-8859-15).
    const cp1252 = Buffer.from([0x43, 0x69, 0x74, 0x72, 0x6f, 0xeb, 0x6e, 0x20, 0x39, 0x20, 0x80]);
    assert.equal(decode(cp1252).text, 'Citroën 9 €');
    assert.equal(decode(cp1252).encoding, 'windows-1252');
  });

  test('the delimiter is the one the header holds most of, outside quotes', () => {
    assert.equal(detectDelimiter('a;b;c\n1,5;2;3'), ';');
    assert.equal(detectDelimiter('a,b,"c;d;e"\n1;2'), ',');
    assert.equal(detectDelimiter('a\tb\n'), '\t');
  });

  test('values are converted only where that is unambiguous', () => {
    assert.equal(convert('decimal', '11250,50'), 11250.5);
    assert.equal(convert('decimal', '19950'), 19950);
    assert.equal(
      convert('decimal', '12.450'),
      '12.450',
      'a thousands separator is not read as a decimal point',
    );
    assert.equal(convert('integer', '120.000'), '120.000', '120.000 km is not 120 km');
    assert.equal(convert('integer', '42000'), 42000);
    assert.equal(convert('coordinate', '51,0543'), 51.0543);
    assert.equal(convert('boolean', 'Ja'), true);
    assert.equal(convert('boolean', 'no'), false);
    assert.equal(convert('boolean', 'maybe'), 'maybe');
    assert.deepEqual(convert('list', ' a.jpg | b.jpg ||'), ['a.jpg', 'b.jpg']);
  });

  test('columns: any case and separators; unknown ones ignored; missing or doubled ones refused', () => {
    const map = mapColumns(['External Reference', 'TITLE', 'fuel_type', 'Kleur', 'Notitie']);
    assert.deepEqual(map.fields, ['externalReference', 'title', 'fuelType', 'color', undefined]);
    assert.deepEqual(map.ignored, ['Notitie']);
    assert.throws(
      () => mapColumns(['title', 'price']),
      (e: Error) => {
        assert.ok(e instanceof CliError);
        assert.match(e.message, /no externalReference column \(header: title, price\)/);
        return true;
      },
    );
    assert.throws(
      () => mapColumns(['externalReference', 'title', 'Price', 'PRICE']),
      /"Price" and "PRICE" are both price/,
    );
  });
});

describe('forecourt import against the service', () => {
  test('a semicolon Latin-1 feed: good rows written, bad ones in the report with row, field, value, reason', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('LAT');
    const csv = [
      'External Reference;Dealer Location Code;Title;Price;Mileage;Fuel Type;Images;Warranty;Interne notitie',
      `${ref}-1;${tree.codes.A1};Citroën C3 1.2 PureTech;11250,50;61200;Benzine;https://img.example/1.jpg|https://img.example/2.jpg;ja;rood`,
      `${ref}-2;${tree.codes.A1};Peugeot 208;12.450;30000;Diesel;;nee;wit`,
      `${ref}-3;${tree.codes.B1};Out of scope;9000;1000;Diesel;;;`,
      `${ref}-4;${tree.codes.A2};Opel Corsa;8000;120.000;Steam;;;`,
    ].join('\r\n');
    const feed = feedFile(`${ref}.csv`, Buffer.from(csv, 'latin1'));

    const run = await runImport([feed], { secret: partner.secret });
    assert.equal(run.code, 1, run.stderr);
    // ë is 0xEB in Windows-1252 and ISO-8859-15 alike: the encoding of Windows exports is taken.
    assert.match(
      run.stderr,
      /4 listings \(CSV, delimiter ";", encoding Windows-1252: not UTF-8 \(read as Windows-1252, the encoding of Windows exports\); --encoding says otherwise\); ignored columns: Interne notitie/,
    );
    // 11250,50 has a decimal comma, so the column writes 1.234,56 and its 12.450 is 12450 euro.
    assert.match(run.stderr, /column "Price": numbers read as 1\.234,56, as row 2: "11250,50" shows/);
    assert.match(run.stderr, /column "Mileage": 1 value could be read two ways \(rows 5\)/);
    assert.match(run.stdout, /created 2 · updated 0 · unchanged 0 · superseded 0 · failed 2/);

    const stock = await mine(partner.secret);
    assert.deepEqual([...stock.keys()].sort(), [`${ref}-1`, `${ref}-2`]);
    const written = stock.get(`${ref}-1`);
    assert.equal(written.title, 'Citroën C3 1.2 PureTech');
    assert.equal(written.price, 11250.5);
    assert.equal(written.fuelType, 'petrol');
    assert.equal(written.warranty, true);
    assert.equal(written.images.length, 2);
    assert.equal(stock.get(`${ref}-2`).price, 12450);

    const [header, ...rows] = readReport(`${feed}.import-report.csv`);
    assert.deepEqual(header, ['row', 'reference', 'code', 'field', 'value', 'reason']);
    assert.deepEqual(rows[0]!.slice(0, 5), [
      '4',
      `${ref}-3`,
      'PROFILE_FORBIDDEN',
      'dealerLocationCode',
      tree.codes.B1,
    ]);
    assert.deepEqual(rows[1]!.slice(0, 5), [
      '5',
      `${ref}-4`,
      'VALIDATION_FAILED',
      'mileage; fuelType',
      '120.000; Steam',
    ]);
    // 120.000 is 120 or 120000 km, and no other mileage of the column tells: refused, never guessed.
    assert.match(
      rows[1]![5]!,
      /could be 120000 \(1\.234,56\) or 120 \(1,234\.56\).*--number-format 1\.234,56 or --number-format 1,234\.56; "Steam" is not allowed/,
    );
    assert.equal(rows.length, 2);
    assert.ok(!existsSync(`${feed}.import-state.json`), 'a finished run leaves no resume state');
  });

  test('with a test secret: says test mode, writes test data only (docs/test-mode.md)', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const { secret } = await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`);
    const ref = unique('TST');
    const csv = [
      'External Reference,Dealer Location Code,Title,Price',
      `${ref}-1,${tree.codes.A1},Golf,9500`,
    ].join('\n');
    const run = await runImport([feedFile(`${ref}.csv`, csv)], { secret });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^test mode: /m);
    assert.equal((await mine(secret)).get(`${ref}-1`)?.price, 9500);
    assert.equal((await mine(partner.secret)).size, 0);
    const live = await runImport([feedFile(`${ref}-live.csv`, csv)], { secret: partner.secret });
    assert.equal(live.code, 0, live.stderr);
    assert.doesNotMatch(live.stderr, /test mode/);
  });

  test('a Belgian export with Dutch columns imports as is (examples/feed-be.csv, as docs/import.md shows)', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('BE');
    // The example's dealers are the demo's; here they are this test's locations.
    const example = readFileSync(path.resolve(import.meta.dirname, '../examples/feed-be.csv'), 'utf8')
      .replaceAll('VDB-GENT', tree.codes.A1!)
      .replaceAll('VDB-ANTW', tree.codes.A2!)
      .replaceAll('VDB-BRUG', tree.codes.A1!)
      .replaceAll('BE-', `${ref}-`);
    const feed = feedFile(`${ref}.csv`, example);
    const run = await runImport([feed], { secret: partner.secret });
    assert.equal(run.code, 0, `${run.stderr}\n${readFileSync(`${feed}.import-report.csv`, 'utf8')}`);
    assert.match(run.stdout, /created 6 · updated 0 · unchanged 0 · superseded 0 · failed 0/);
    assert.doesNotMatch(run.stderr, /ignored columns/, 'every Dutch column is known');

    const stock = await mine(partner.secret);
    const byRef = (n: number) => stock.get(`${ref}-200${n}`);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [byRef(n).price, byRef(n).mileage]),
      [
        [12500, 61200], // 12.500,00 and 61.200 km
        [17990, 88500], // 17.990,-
        [18750, 42000], // € 18.750: the column's 12.500,00 says dots are thousands
        [21500, 120000], // 21 500; 120.000 km by the column's 61.200 km
        [39990, 12000],
        [9950, 97000],
      ],
    );
    assert.deepEqual(
      [1, 2, 3].map((n) => [byRef(n).transmission, byRef(n).fuelType, byRef(n).bodyType]),
      [
        ['automatic', 'petrol', 'hatchback'], // DSG
        ['manual', 'diesel', 'station_wagon'],
        ['automatic', 'hybrid', 'suv'], // CVT
      ],
    );
    assert.equal(byRef(1).year, 2021);
    assert.equal(byRef(1).color, 'Grijs');
    assert.equal(byRef(1).images.length, 2);
    assert.equal(byRef(1).firstRegistration, '2021-03-01');
    assert.equal(byRef(1).warranty, true);
    assert.equal(byRef(3).brand, 'Toyota');
  });

  test('numbers no value of their column explains are refused naming --number-format; --number-format reads them; a mixed column is refused', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('NUM');
    const feed = feedFile(
      `${ref}.csv`,
      [
        'Referentie;Vestigingscode;Titel;Prijs;Kilometerstand',
        `${ref}-1;${tree.codes.A1};Auto 1;39.990;120.000`,
        `${ref}-2;${tree.codes.A1};Auto 2;21500;45000`,
      ].join('\n'),
    );
    const ambiguous = await runImport([feed], { secret: partner.secret });
    assert.equal(ambiguous.code, 1, ambiguous.stderr);
    const [, row] = readReport(`${feed}.import-report.csv`);
    assert.deepEqual(row!.slice(0, 5), [
      '2',
      `${ref}-1`,
      'VALIDATION_FAILED',
      'price; mileage',
      '39.990; 120.000',
    ]);
    assert.match(row![5]!, /could be 39990 \(1\.234,56\) or 39\.99 \(1,234\.56\).*--number-format/);
    assert.equal((await mine(partner.secret)).size, 1);

    const told = await runImport([feed, '--number-format', '1.234,56'], { secret: partner.secret });
    assert.equal(told.code, 0, told.stderr);
    const stored = (await mine(partner.secret)).get(`${ref}-1`);
    assert.deepEqual([stored.price, stored.mileage], [39990, 120000]);

    const mixed = feedFile(
      `${ref}-mixed.csv`,
      [
        'Referentie;Vestigingscode;Titel;Prijs',
        `${ref}-3;${tree.codes.A1};Auto 3;12.500,00`,
        `${ref}-4;${tree.codes.A1};Auto 4;19950.50`,
        `${ref}-5;${tree.codes.A1};Auto 5;18000`,
      ].join('\n'),
    );
    const refused = await runImport([mixed], { secret: partner.secret });
    assert.equal(refused.code, 1, refused.stderr);
    const report = readReport(`${mixed}.import-report.csv`).slice(1);
    assert.deepEqual(
      report.map((r) => r.slice(0, 5)),
      [
        ['2', `${ref}-3`, 'VALIDATION_FAILED', 'price', '12.500,00'],
        ['3', `${ref}-4`, 'VALIDATION_FAILED', 'price', '19950.50'],
      ],
    );
    assert.match(
      report[0]![5]!,
      /mixes 1\.234,56 \(row 2: "12\.500,00"\) and 1,234\.56 \(row 3: "19950\.50"\)/,
    );
    assert.equal((await mine(partner.secret)).get(`${ref}-5`).price, 18000);

    const badOption = await runImport([feed, '--number-format', 'EU'], { secret: partner.secret });
    assert.equal(badOption.code, 2);
    assert.match(badOption.stderr, /--number-format must be 1\.234,56 .* or 1,234\.56 .*, got "EU"/);
  });

  test("--columns maps a system's own column names; a field the listing does not have stops the run", async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('COL');
    const feed = feedFile(
      `${ref}.csv`,
      ['Stock nr;Filiaal;Titel;Verkoopprijs;Kleur', `${ref}-1;${tree.codes.A1};Auto 1;9.950,00;rood`].join(
        '\n',
      ),
    );
    const columns = feedFile(
      `${ref}-columns.json`,
      JSON.stringify({ 'Stock nr': 'externalReference', Filiaal: 'dealerLocationCode', Kleur: null }),
    );
    const run = await runImport([feed, '--columns', columns], { secret: partner.secret });
    assert.equal(run.code, 0, run.stderr);
    const stored = (await mine(partner.secret)).get(`${ref}-1`);
    assert.equal(stored.price, 9950);
    assert.equal(stored.color ?? null, null, 'a column mapped to null is ignored');

    const bad = feedFile(`${ref}-bad.json`, JSON.stringify({ 'Stock nr': 'externalRef' }));
    const refused = await runImport([feed, '--columns', bad], { secret: partner.secret });
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /column "Stock nr" is mapped to "externalRef", which is not a listing field; did you mean "externalReference"\?/,
    );
  });

  test('--dry-run validates every listing on the service and writes nothing', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('DRY');
    const feed = feedFile(
      `${ref}.json`,
      JSON.stringify({
        items: [
          { externalReference: `${ref}-1`, dealerLocationCode: tree.codes.A1, title: 'Fine', price: 1000 },
          { externalReference: `${ref}-2`, dealerLocationCode: tree.codes.A1, title: 'Bad year', year: 1492 },
        ],
      }),
    );
    const run = await runImport([feed, '--dry-run'], { secret: partner.secret });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /dry run \(nothing written\): 2 listings/);
    assert.match(run.stdout, /would be created 1/);
    assert.equal((await mine(partner.secret)).size, 0);
    const [, row] = readReport(`${feed}.import-report.csv`);
    // Every issue of the row at once: the bad year and the missing price of an active listing.
    assert.deepEqual(row!.slice(0, 5), ['2', `${ref}-2`, 'VALIDATION_FAILED', 'year; price', '1492; ']);
    assert.ok(!existsSync(`${feed}.import-state.json`));
  });

  test('interrupted mid-run, the same command resumes without re-sending what was accepted', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('RES');
    // Row 11 (in a batch sent before the interruption) and row 241 (after it) are refused.
    const csv = stockCsv(ref, tree.codes.A1!, 250)
      .replace(`${ref}-10;${tree.codes.A1};Car 10;10009`, `${ref}-10;${tree.codes.A1};Car 10;ten`)
      .replace(`${ref}-240;${tree.codes.A1};Car 240;10239`, `${ref}-240;${tree.codes.A1};Car 240;-5`);
    const feed = feedFile(`${ref}.csv`, csv);
    const proxy = await startFlakyProxy(app);
    try {
      // Two batches go through; the third meets a 503 asking for 30 s, and the partner presses Ctrl-C.
      // `take`: a batch the busy service itself answered 503 and the importer sent again counts
      // once (CI: the real 503 had used up the planned one, and Ctrl-C came at 100 done).
      proxy.plan('take', 'take', { status: 503, retryAfter: 30 });
      const first = await runImport([feed], {
        url: proxy.url,
        secret: partner.secret,
        onStderr: (text, child) => {
          if (/HTTP 503\): retrying in 3\d\.\d s/.test(text) && !child.killed) child.kill('SIGINT');
        },
      });
      assert.equal(first.code, 130, first.stderr);
      assert.match(first.stderr, /200 of 250 listings are done and recorded in .*import-state\.json/);
      const state = JSON.parse(readFileSync(`${feed}.import-state.json`, 'utf8'));
      assert.equal(state.done, 200);
      assert.equal(JSON.stringify(state).includes(partner.secret), false, 'the state never holds the secret');
      const sent = await mine(partner.secret);
      assert.equal(sent.size, 199);
      assert.ok(sent.has(`${ref}-200`) && !sent.has(`${ref}-201`) && !sent.has(`${ref}-10`));

      const bulkBefore = proxy.seen.filter((r) => r.path.includes('bulk-upsert')).length;
      const second = await runImport([feed], { url: proxy.url, secret: partner.secret });
      assert.equal(second.code, 1, second.stderr);
      assert.match(second.stderr, /resuming: 200 of 250 listings were sent by an earlier run/);
      const resent = proxy.seen.filter((r) => r.path.includes('bulk-upsert')).slice(bulkBefore);
      // Only the third batch is sent again, and taken once. A busy machine may answer it 503 (the
      // write past its time limit) and the importer then sends it again, as it must: those tries
      // are allowed, not a second batch (CI: 2 requests, both on a loaded machine).
      const taken = resent.filter((r) => r.status !== undefined && r.status < 300);
      const retried = resent.filter((r) => r.status === undefined || r.status >= 500 || r.status === 429);
      assert.equal(taken.length, 1, `only the third batch is sent again: ${JSON.stringify(resent)}`);
      assert.equal(taken.length + retried.length, resent.length, second.stderr);
      if (retried.length) assert.match(second.stderr, /retrying/, 'a try sent again says so');
      assert.match(second.stdout, /created 248 .* failed 2/, 'the counts cover both runs');
      assert.equal((await mine(partner.secret)).size, 248);
      const report = readReport(`${feed}.import-report.csv`).slice(1);
      assert.deepEqual(
        report.map((r) => r.slice(0, 5)),
        [
          ['11', `${ref}-10`, 'VALIDATION_FAILED', 'price', 'ten'],
          // A leading "-" gets an apostrophe: a spreadsheet must not read a cell of the feed as a formula.
          ['241', `${ref}-240`, 'VALIDATION_FAILED', 'price', "'-5"],
        ],
        'the report covers the failures of both runs, once each',
      );
      assert.ok(!existsSync(`${feed}.import-state.json`));
      assert.ok(!existsSync(`${feed}.import-state.failures.jsonl`));
    } finally {
      await proxy.close();
    }
  });

  test('--mark-missing-sold: refused above 20% without --force, then only this partner’s missing listings', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const other = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('MISS');
    const full = feedFile(`${ref}-full.csv`, stockCsv(ref, tree.codes.A2!, 10));
    assert.equal((await runImport([full], { secret: partner.secret })).code, 0);
    const othersRef = `${ref}-OTHER`;
    const put = await app.call('PUT', `/api/external/v1/listings/${othersRef}`, {
      secret: other.secret,
      body: { title: 'Not yours', price: 5000, dealerLocationCode: tree.codes.A2 },
    });
    assert.equal(put.status, 201, put.text);

    // 7 of 10 in the feed: 3 missing is 30%.
    const partial = feedFile(`${ref}-partial.csv`, stockCsv(ref, tree.codes.A2!, 7));
    const refused = await runImport([partial, '--mark-missing-sold'], { secret: partner.secret });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /would mark 3 of your 10 unsold listings \(30%\) as sold, more than 20%/);
    assert.equal((await mine(partner.secret)).get(`${ref}-8`).status, 'active');

    const empty = feedFile(`${ref}-empty.csv`, 'externalReference;title\n');
    const wiped = await runImport([empty, '--mark-missing-sold'], { secret: partner.secret });
    assert.equal(wiped.code, 2, 'an empty feed does not wipe the stock');
    assert.match(wiped.stderr, /would mark 10 of your 10/);

    const dry = await runImport([partial, '--mark-missing-sold', '--force', '--dry-run'], {
      secret: partner.secret,
    });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, /would mark 3 of 10 as sold/);
    assert.equal((await mine(partner.secret)).get(`${ref}-8`).status, 'active');

    const forced = await runImport([partial, '--mark-missing-sold', '--force'], { secret: partner.secret });
    assert.equal(forced.code, 0, forced.stderr);
    const after = await mine(partner.secret);
    for (const n of [8, 9, 10]) assert.equal(after.get(`${ref}-${n}`).status, 'sold');
    for (const n of [1, 7]) assert.equal(after.get(`${ref}-${n}`).status, 'active');
    const others = await mine(other.secret);
    assert.equal(others.get(othersRef).status, 'active', 'another partner’s listing is not touched');

    // Within 20%: 1 of the 7 unsold is missing (14%), no --force needed.
    const six = feedFile(`${ref}-six.csv`, stockCsv(ref, tree.codes.A2!, 6));
    const within = await runImport([six, '--mark-missing-sold'], { secret: partner.secret });
    assert.equal(within.code, 0, within.stderr);
    assert.equal((await mine(partner.secret)).get(`${ref}-7`).status, 'sold');
  });

  test('--mark-missing-sold by location: a one-location feed never marks other locations sold by surprise', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('LOC');
    const both = feedFile(
      `${ref}-both.csv`,
      `${stockCsv(`${ref}-A1`, tree.codes.A1!, 5)}\n${stockCsv(`${ref}-A2`, tree.codes.A2!, 5).split('\n').slice(1).join('\n')}`,
    );
    assert.equal((await runImport([both], { secret: partner.secret })).code, 0);
    // Next day's feed of A1 alone, with one A1 car gone.
    const a1 = feedFile(`${ref}-a1.csv`, stockCsv(`${ref}-A1`, tree.codes.A1!, 4));
    const unchosen = await runImport([a1, '--mark-missing-sold', '--force'], { secret: partner.secret });
    assert.equal(unchosen.code, 2, unchosen.stderr);
    assert.match(
      unchosen.stderr,
      /5 of the listings it would mark sold are at locations this feed does not name/,
    );
    assert.match(unchosen.stderr, /--locations-from-feed/);
    // The whole would-be list is written, not a sample.
    const listed = readFileSync(`${a1}.mark-sold.txt`, 'utf8').trim().split('\n').sort();
    assert.equal(listed.length, 6);

    const dry = await runImport([a1, '--mark-missing-sold', '--locations-from-feed', '--dry-run'], {
      secret: partner.secret,
    });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, new RegExp(`covers the locations ${tree.codes.A1!.toLowerCase()}`));
    assert.match(dry.stderr, /would mark 1 of 5 as sold/);
    assert.doesNotMatch(dry.stderr, /\d+ created/, 'a dry run does not say "created"');
    assert.deepEqual(readFileSync(`${a1}.would-mark-sold.txt`, 'utf8').trim().split('\n'), [`${ref}-A1-5`]);
    assert.match(dry.stdout, /would mark sold \(missing from the feed\): 1/);

    const real = await runImport([a1, '--mark-missing-sold', '--location', tree.codes.A1!], {
      secret: partner.secret,
    });
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, /marked sold \(missing from the feed\): 1/);
    const after = await mine(partner.secret);
    assert.equal(after.get(`${ref}-A1-5`).status, 'sold');
    for (let n = 1; n <= 5; n++) assert.equal(after.get(`${ref}-A2-${n}`).status, 'active', 'A2 untouched');
  });

  test("a refused run still writes its failure report; repeated rows are named; --map maps a feed's own words", async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('MAP');
    const csv = [
      'externalReference;dealerLocationCode;title;price;fuelType',
      `${ref}-1;${tree.codes.A2};Car 1;10000;Stoom`,
      `${ref}-2;${tree.codes.A2};Car 2;10000;BZ`,
      `${ref}-3;${tree.codes.A2};Car 3;-5;Diesel`,
      `${ref}-1;${tree.codes.A2};Car 1 again;11000;Stoom`,
    ].join('\n');
    const feed = feedFile(`${ref}.csv`, csv);
    const mapFile = feedFile(
      `${ref}-map.json`,
      JSON.stringify({ fuelType: { stoom: 'other', BZ: 'petrol' } }),
    );
    const run = await runImport([feed, '--map', mapFile], { secret: partner.secret });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /3 values mapped/);
    assert.match(
      run.stderr,
      new RegExp(`1 row repeats an earlier reference.*row 5 repeats "${ref}-1" of row 2`),
    );
    const stored = await mine(partner.secret);
    assert.deepEqual([stored.get(`${ref}-1`).fuelType, stored.get(`${ref}-2`).fuelType], ['other', 'petrol']);

    const badMap = feedFile(`${ref}-bad-map.json`, JSON.stringify({ fuelTpye: { a: 'b' } }));
    const refusedMap = await runImport([feed, '--map', badMap], { secret: partner.secret });
    assert.equal(refusedMap.code, 2);
    assert.match(refusedMap.stderr, /"fuelTpye" is not a listing field; did you mean "fuelType"\?/);

    // --mark-missing-sold refused (everything would go): the failed row is still in the report.
    const other = feedFile(
      `${ref}-other.csv`,
      [csv.split('\n')[0], `${ref}-9;${tree.codes.A2};Bad;-1;Diesel`].join('\n'),
    );
    const report = `${other}.import-report.csv`;
    const refused = await runImport([other, '--mark-missing-sold', '--all-locations'], {
      secret: partner.secret,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.ok(existsSync(report), 'the report of a refused run exists');
    assert.ok(
      readReport(report).some((row) => row.includes(`${ref}-9`)),
      'the failed row is in it',
    );
  });

  test('a Belgian DMS export as it is (Windows-1252, CRLF, Dutch headers, no title column) reads back exactly; the same feed in UTF-8 with a BOM gives the same listings', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('DMS');
    const header =
      "Referentie;Merk;Model;Uitvoering;Prijs;Kilometerstand;Bouwjaar;Brandstof;Transmissie;Eerste inschrijving;Foto's";
    // What the partner's dealer system wrote, and what each listing must read back as.
    const cars: {
      cells: string[];
      brand: string;
      title: string;
      price: number;
      first: string;
      mileage: number;
    }[] = [
      [
        'Škoda',
        'Octavia',
        'Combi 2.0 TDI Style',
        '€ 18.750',
        '88.500',
        '2020',
        'Diesel',
        'Manueel',
        '15/03/2021',
        18750,
        '2021-03-15',
        88500,
      ],
      [
        'Citroën',
        'C4',
        '1.2 PureTech Feel',
        '12.500,00',
        '61.200 km',
        '2019',
        'Benzine',
        'Automaat',
        '01-09-2019',
        12500,
        '2019-09-01',
        61200,
      ],
      [
        'Škoda',
        'Fabia',
        'Œuvre Édition',
        '€ 9.950,-',
        '120.000',
        '2016',
        'Benzine',
        'Manueel',
        '28/02/2016',
        9950,
        '2016-02-28',
        120000,
      ],
      [
        'Citroën',
        'Berlingo',
        'Cœur 1.5 BlueHDi',
        '€ 21.500',
        '45.000',
        '2021',
        'Diesel',
        'Manueel',
        '03/2021',
        21500,
        '2021-03-01',
        45000,
      ],
      [
        'Volkswagen',
        'Golf',
        '1.5 eTSI Life',
        '€ 24.990',
        '21.000',
        '2022',
        'Benzine',
        'DSG',
        '30-06-2022',
        24990,
        '2022-06-30',
        21000,
      ],
      [
        'Toyota',
        'C-HR',
        '1.8 Hybrid C-Ult',
        '€ 19.750',
        '42.000',
        '2021',
        'Hybride',
        'CVT',
        '12/01/2021',
        19750,
        '2021-01-12',
        42000,
      ],
      [
        'Renault',
        'Clio',
        'Zoë-pakket',
        '€ 11.250',
        '75.300',
        '2018',
        'Benzine',
        'Manueel',
        '07/05/2018',
        11250,
        '2018-05-07',
        75300,
      ],
      [
        'Peugeot',
        '208',
        'Allure',
        '€ 14.990',
        '33.000',
        '2020',
        'Benzine',
        'Automaat',
        '11-11-2020',
        14990,
        '2020-11-11',
        33000,
      ],
      [
        'Opel',
        'Corsa',
        'Édition',
        '€ 8.750',
        '98.000',
        '2015',
        'Diesel',
        'Manueel',
        '04/2015',
        8750,
        '2015-04-01',
        98000,
      ],
      [
        'BMW',
        '118i',
        'M Sport',
        '€ 27.450',
        '18.500',
        '2022',
        'Benzine',
        'Automaat',
        '25/07/2022',
        27450,
        '2022-07-25',
        18500,
      ],
      [
        'Kia',
        'Niro',
        'Hybride Pulse',
        '€ 23.900',
        '29.999',
        '2021',
        'Hybride',
        'Automaat',
        '02/02/2021',
        23900,
        '2021-02-02',
        29999,
      ],
      [
        'Dacia',
        'Sandero',
        'Stepway Benzine/LPG',
        '€ 12.750',
        '51.000',
        '2020',
        'Benzine/LPG',
        'Manueel',
        '19/10/2020',
        12750,
        '2020-10-19',
        51000,
      ],
      [
        'Škoda',
        'Kodiaq',
        '2.0 TDI Sportline',
        '€ 36.900',
        '12.000',
        '2023',
        'Diesel',
        'DSG',
        '01/03/2023',
        36900,
        '2023-03-01',
        12000,
      ],
      [
        'Mercedes-Benz',
        'A 180',
        'Business Solution',
        '€ 25.750',
        '39.000',
        '2021',
        'Benzine',
        'Automaat',
        '16-08-2021',
        25750,
        '2021-08-16',
        39000,
      ],
      [
        'Citroën',
        'C3',
        'Shine',
        '€ 13.450',
        '47.800',
        '2019',
        'Benzine',
        'Manueel',
        '09/2019',
        13450,
        '2019-09-01',
        47800,
      ],
    ].map(([brand, model, variant, price, km, year, fuel, gearbox, first, euros, iso, mileage]) => ({
      cells: [brand, model, variant, price, km, year, fuel, gearbox, first] as string[],
      brand: brand as string,
      title: `${brand} ${model} ${variant}`,
      price: euros as number,
      first: iso as string,
      mileage: mileage as number,
    }));
    const lines = (prefix: string) => [
      header,
      ...cars.map(
        (car, i) =>
          `${prefix}-${i + 1};${car.cells.join(';')};https://img.example/${i}-1.jpg|https://img.example/${i}-2.jpg`,
      ),
    ];
    const check = async (prefix: string) => {
      const stock = await mine(partner.secret);
      for (const [i, car] of cars.entries()) {
        const listing = stock.get(`${prefix}-${i + 1}`);
        assert.ok(listing, `${prefix}-${i + 1} imported`);
        assert.deepEqual(
          {
            brand: listing.brand,
            title: listing.title,
            price: listing.price,
            firstRegistration: listing.firstRegistration,
            mileage: listing.mileage,
            status: listing.status,
            images: listing.images.length,
          },
          {
            brand: car.brand,
            title: car.title,
            price: car.price,
            firstRegistration: car.first,
            mileage: car.mileage,
            status: 'active',
            images: 2,
          },
        );
      }
      assert.equal(stock.get(`${prefix}-12`).fuelType, 'lpg', 'Benzine/LPG: the gas it runs on');
      assert.equal(stock.get(`${prefix}-1`).transmission, 'manual');
      return stock;
    };

    const legacy = feedFile(`${ref}-1252.csv`, windows1252(lines(`${ref}-W`).join('\r\n')));
    const run = await runImport([legacy], { secret: partner.secret });
    assert.equal(run.code, 0, `${run.stderr}\n${readFileSync(`${legacy}.import-report.csv`, 'utf8')}`);
    assert.match(
      run.stderr,
      /15 listings \(CSV, delimiter ";", encoding Windows-1252: not UTF-8, and byte 0x8A \("Š" in Windows-1252\) is a control character in ISO-8859-15/,
    );
    assert.match(
      run.stderr,
      /the feed has no title column: titles made from "\{brand\} \{model\} \{variant\}"/,
    );
    assert.match(run.stdout, /created 15 · updated 0 · unchanged 0 · superseded 0 · failed 0/);
    const fromLegacy = await check(`${ref}-W`);

    const bom = feedFile(
      `${ref}-utf8.csv`,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines(`${ref}-U`).join('\r\n'))]),
    );
    const utf8 = await runImport([bom], { secret: partner.secret });
    assert.equal(utf8.code, 0, utf8.stderr);
    assert.match(utf8.stderr, /15 listings \(CSV, delimiter ";", encoding UTF-8\)/);
    const fromUtf8 = await check(`${ref}-U`);
    const shape = (l: Record<string, unknown>) => {
      const { id, externalReference, slug, listingUrl, createdAt, updatedAt, changedAt, ...rest } = l;
      return rest;
    };
    for (let i = 1; i <= 15; i++) {
      assert.deepEqual(shape(fromUtf8.get(`${ref}-U-${i}`)), shape(fromLegacy.get(`${ref}-W-${i}`)));
    }
  });

  test('a Windows-1252 feed read as ISO-8859-15 (--encoding) is refused row by row, naming the encoding and --encoding', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('C1');
    const feed = feedFile(
      `${ref}.csv`,
      windows1252(
        ['Referentie;Merk;Model;Prijs', `${ref}-1;Škoda;Octavia;18750`, `${ref}-2;Citroën;C3;9950`].join(
          '\r\n',
        ),
      ),
    );
    const run = await runImport([feed, '--encoding', 'latin-9'], { secret: partner.secret });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /encoding ISO-8859-15\)/);
    assert.match(run.stderr, /1 row is not sent: text with control characters/);
    assert.match(run.stdout, /created 1 · .* failed 1/);
    const [, row, ...rest] = readReport(`${feed}.import-report.csv`);
    assert.deepEqual(rest, []);
    assert.deepEqual(row!.slice(0, 4), ['2', `${ref}-1`, 'NOT_SENT', 'brand; title']);
    assert.match(
      row![5]!,
      /holds U\+008A, a control character \(at character 1\).*read as ISO-8859-15; .*--encoding windows-1252/,
    );
    const stock = await mine(partner.secret);
    assert.ok(!stock.has(`${ref}-1`), 'never imported as "\\u008Akoda"');
    assert.equal(stock.get(`${ref}-2`).brand, 'Citroën');
    // Named right, the same bytes import whole.
    const named = await runImport([feed, '--encoding', 'windows-1252'], { secret: partner.secret });
    assert.equal(named.code, 0, named.stderr);
    assert.equal((await mine(partner.secret)).get(`${ref}-1`).brand, 'Škoda');
  });

  test('--title, --location, dates (--date-order), price on request and bi-fuel cars', async () => {
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    const ref = unique('OPT');
    const feed = feedFile(
      `${ref}.csv`,
      [
        'Referentie;Vestigingscode;Merk;Model;Bouwjaar;Prijs;Brandstof;Eerste inschrijving',
        `${ref}-1;;Kia;Ceed;2021;€ 18.750,00;Benzine/LPG;04/03/2021`,
        `${ref}-2;${tree.codes.A2};Kia;Rio;2020;Prijs op aanvraag;LPG/Benzine;05-2020`,
        `${ref}-3;;Kia;Picanto;2019;POA;Benzine/CNG;2019-06-30`,
        `${ref}-4;;Kia;Stonic;2022;€ 17.500,00;Benzine;13/13/2022`,
      ].join('\r\n'),
    );
    const run = await runImport(
      [feed, '--location', tree.codes.A1!, '--title', '{brand} {model} ({Bouwjaar})'],
      {
        secret: partner.secret,
      },
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `--location ${tree.codes.A1}: 3 rows without a location of their own go to ${tree.codes.A1}; 1 name their own`,
      ),
    );
    assert.match(run.stderr, /titles made from --title "\{brand\} \{model\} \(\{Bouwjaar\}\)"/);
    assert.match(
      run.stderr,
      /column "Prijs": 2 rows say price on request \(row 3, 4\): imported as drafts without a price/,
    );
    // Bi-fuel words are sent as written and the service files them (src/domain/enums.ts): lpg, cng.
    assert.match(run.stderr, /column "Eerste inschrijving": 1 date could not be read \(row 5\)/);
    assert.match(run.stdout, /2 were imported as drafts \(price on request\): named in the report/);
    const stock = await mine(partner.secret);
    const at = (n: number) => stock.get(`${ref}-${n}`);
    assert.deepEqual(
      [1, 2, 3].map((n) => [
        at(n).title,
        at(n).status,
        at(n).price ?? null,
        at(n).fuelType,
        at(n).firstRegistration,
      ]),
      [
        ['Kia Ceed (2021)', 'active', 18750, 'lpg', '2021-03-04'], // 4 March: never April 3rd
        ['Kia Rio (2020)', 'draft', null, 'lpg', '2020-05-01'],
        ['Kia Picanto (2019)', 'draft', null, 'cng', '2019-06-30'],
      ],
    );
    assert.equal(at(1).dealer.locationCode ?? at(1).dealerLocationCode, tree.codes.A1);
    assert.equal(
      at(2).dealer.locationCode ?? at(2).dealerLocationCode,
      tree.codes.A2,
      "a row's own location wins",
    );
    const report = readReport(`${feed}.import-report.csv`).slice(1);
    assert.deepEqual(
      report.map((r) => r.slice(0, 5)),
      [
        ['3', `${ref}-2`, 'PRICE_ON_REQUEST', 'price', 'Prijs op aanvraag'],
        ['4', `${ref}-3`, 'PRICE_ON_REQUEST', 'price', 'POA'],
        ['5', `${ref}-4`, 'VALIDATION_FAILED', 'firstRegistration', '13/13/2022'],
      ],
    );
    assert.match(report[0]![5]!, /price on request: imported as a draft without a price/);
    assert.match(report[2]![5]!, /has no month 13/);

    // A feed that writes the month first says so.
    const us = feedFile(
      `${ref}-us.csv`,
      [`Referentie;Titel;Prijs;Eerste inschrijving`, `${ref}-5;Kia Soul;9000;03/15/2021`].join('\n'),
    );
    const refused = await runImport([us], { secret: partner.secret });
    assert.equal(refused.code, 1);
    assert.match(readFileSync(`${us}.import-report.csv`, 'utf8'), /--date-order mdy/);
    const told = await runImport([us, '--date-order', 'mdy'], { secret: partner.secret });
    assert.equal(told.code, 0, told.stderr);
    assert.equal((await mine(partner.secret)).get(`${ref}-5`).firstRegistration, '2021-03-15');
  });

  test('bad options and a wrong secret stop at once with exit code 2 and a reason', async () => {
    const feed = feedFile('any.csv', stockCsv('ANY', 'nowhere', 1));
    const badBatch = await runImport([feed, '--batch-size', '500'], { secret: 'fc_x' });
    assert.equal(badBatch.code, 2);
    assert.match(badBatch.stderr, /--batch-size must be a whole number from 1 to 100, got "500"/);
    const noColumns = await runImport([feedFile('bad.csv', 'nummer;name\n1;x')], { secret: 'fc_x' });
    assert.equal(noColumns.code, 2);
    assert.match(noColumns.stderr, /no externalReference column \(header: nummer, name\)/);
    assert.match(noColumns.stderr, /--columns FILE/);
    // The service's self-signed certificate without --ca: refused at once, saying how to trust it.
    // It was retried for 6 s: "at once" is that nothing was retried (the output says each retry),
    // not a time, which a busy machine stretches (4.2 s for the command to start and answer).
    const untrusted = await runImport([feed], { secret: 'fc_x', ca: false });
    assert.equal(untrusted.code, 2);
    assert.match(
      untrusted.stderr,
      /TLS_CERTIFICATE_ERROR: .*certificate is not trusted.*`--ca FILE` \(or FORECOURT_CA\)/,
    );
    assert.doesNotMatch(untrusted.stderr, /retrying/);
    const unauthorized = await runImport([feed], { secret: 'fc_not_a_real_secret' });
    assert.equal(unauthorized.code, 2);
    assert.match(unauthorized.stderr, /stopped after 0 listings: UNAUTHORIZED/);
  });
});
