/**
 * What the read model costs a write (docs/benchmarks.md, "The read model"): the store's write
 * statements with the read model against the same writes without it, on a small database of its
 * own, alternating the two so that a busy machine weighs on both alike.
 *
 *   node --import tsx bench/write-cost.ts [--database-url postgres://…/any] [--rounds 5] [--baseline-ref main]
 *
 * Without --database-url: PGlite in a temporary directory. With it: a new database on that
 * server, dropped at the end. "Without the read model" is the store of --baseline-ref (the write
 * SQL before the read model) with the read model's listing triggers disabled and its columns
 * nullable; "with" is this tree's store with the triggers on. Measured, median of the rounds:
 * an update of 2,000 listings through the store (one changed field each), a bulk of 100 as the
 * service writes it (lock, insert 50 new, update 50 changed, history), and a plain SQL UPDATE of
 * the 2,000 (what an operator's or a migration's statement pays).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { listingBodySchema, toListingWrite } from '../src/domain/listings/input.js';
import type { Db, Queryable } from '../src/store/db.js';
import { type ListingRow, listingWriteStore } from '../src/store/listings/writes.js';
import { migrate } from '../src/store/migrate.js';
import { openDb } from '../src/store/open.js';
import { listingBody } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    rounds: { type: 'string', default: '5' },
    'baseline-ref': { type: 'string', default: 'main' },
  },
});
const rounds = Number(values.rounds);
const root = path.resolve(import.meta.dirname, '..');

/**
 * A write store of another version: that version's signature (a store before the read model took
 * keys). One with recordHistory records the history in a statement of its own; the current one's
 * inserts and updates record it themselves.
 */
type WriteStore = ReturnType<typeof listingWriteStore> & {
  recordHistory?: (rows: readonly unknown[], tx: Queryable) => Promise<void>;
};
type AnyWriteStore = (db: Queryable, keys: readonly string[]) => WriteStore;

/** The baseline's writes.ts, its relative imports pointed at this tree (they are types and column lists). */
async function baselineStore(ref: string): Promise<AnyWriteStore> {
  const source = execFileSync('git', ['show', `${ref}:src/store/listings/writes.ts`], { cwd: root })
    .toString()
    .replaceAll("from '../", `from '${root}/src/store/`)
    .replaceAll("from './", `from '${root}/src/store/listings/`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-write-cost-'));
  const file = path.join(dir, 'writes.ts');
  writeFileSync(file, source);
  try {
    return ((await import(file)) as { listingWriteStore: AnyWriteStore }).listingWriteStore;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function adminQuery(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const serverUrl = values['database-url'];
const dbName = `fc_write_cost_${process.pid}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fc-write-cost-db-'));
let url: string | undefined;
if (serverUrl) {
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  await adminQuery(admin.toString(), `CREATE DATABASE ${dbName}`);
  const own = new URL(serverUrl);
  own.pathname = `/${dbName}`;
  url = own.toString();
}
const db: Db = await openDb({
  databaseUrl: url,
  dataDir,
  statementTimeoutMs: 120_000,
  connectTimeoutMs: 10_000,
  poolSize: 2,
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const timed = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

try {
  await migrate(db);
  const partnerId = randomUUID();
  const owner = { partnerId, test: false };
  const dealerId = randomUUID();
  await db.query(
    'P',
    `INSERT INTO partners (id, name, scopes, access_scope) VALUES ($1, 'Bench', '{}', 'global')`,
    [partnerId],
  );
  await db.query('D', `INSERT INTO dealer_profiles (id, location_code) VALUES ($1, 'G001-L001')`, [dealerId]);
  const schema = listingBodySchema({ historyReportHosts: [] });
  let mileage = 0;
  // Listings as the service writes them (5 images, 3 features), every one changed on each write.
  const rowsFor = (references: readonly string[]): ListingRow[] => {
    mileage++;
    return references.map((reference, i) => {
      const values = toListingWrite(schema.parse(listingBody(reference, i))).values;
      return {
        id: randomUUID(),
        reference,
        slug: `bench-${reference}`,
        dealerProfileId: dealerId,
        status: 'active',
        statusGiven: false,
        dealerGiven: true,
        values: { ...values, mileage },
        // As locked: an update that keeps status and dealer records no status history.
        previous: { status: 'active', dealerProfileId: dealerId },
      };
    });
  };
  const refs = Array.from({ length: 2000 }, (_, i) => `WC-${i}`);
  const current = listingWriteStore(db);
  const baseline = (await baselineStore(values['baseline-ref']!))(db, []);
  await current.insertNew(owner, rowsFor(refs));

  const triggers = (
    await db.query<{ tgname: string }>(
      'T',
      `SELECT tgname FROM pg_trigger WHERE tgrelid = 'listings'::regclass AND tgname LIKE 'listings_read_json%'`,
    )
  ).map((t) => t.tgname);
  const readModel = async (on: boolean) => {
    for (const t of triggers)
      await db.exec('T', `ALTER TABLE listings ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${t}`);
    if (!on)
      await db.exec(
        'T',
        'ALTER TABLE listings ALTER read_json DROP NOT NULL, ALTER read_json_tail DROP NOT NULL',
      );
    else {
      // Rows the baseline wrote hold stale text: rewritten (through the trigger) before measuring.
      await db.exec('T', 'UPDATE listings SET read_json = NULL');
      await db.exec(
        'T',
        'ALTER TABLE listings ALTER read_json SET NOT NULL, ALTER read_json_tail SET NOT NULL',
      );
    }
  };

  let bulk = 0;
  const measure = async (store: WriteStore) => {
    const update = await timed(() => db.transaction((tx) => store.updateChanged(owner, rowsFor(refs), tx)));
    const bulks: number[] = [];
    for (let b = 0; b < 10; b++) {
      const batch = [
        ...refs.slice(b * 50, b * 50 + 50),
        ...Array.from({ length: 50 }, (_, i) => `WC-new-${bulk}-${i}`),
      ];
      bulk++;
      const rows = rowsFor(batch);
      bulks.push(
        await timed(() =>
          db.transaction(async (tx: Queryable) => {
            const known = new Set(
              (
                await store.lockExisting(
                  owner,
                  rows.map((r) => r.reference),
                  tx,
                )
              ).map((e) => e.reference),
            );
            const inserted = await store.insertNew(
              owner,
              rows.filter((r) => !known.has(r.reference)),
              tx,
            );
            await store.updateChanged(
              owner,
              rows.filter((r) => known.has(r.reference)),
              tx,
            );
            await store.recordHistory?.(inserted, tx);
          }),
        ),
      );
    }
    const plain = await timed(() =>
      db.exec(
        'T',
        `UPDATE listings SET mileage = mileage + 1 WHERE external_reference LIKE 'WC-%' AND external_reference NOT LIKE 'WC-new-%'`,
      ),
    );
    return { update, bulk: median(bulks), plain };
  };

  const results = {
    without: [] as Awaited<ReturnType<typeof measure>>[],
    with: [] as Awaited<ReturnType<typeof measure>>[],
  };
  // One warm-up round of each, not counted.
  for (let r = -1; r < rounds; r++) {
    await readModel(false);
    const a = await measure(baseline);
    await readModel(true);
    const b = await measure(current);
    if (r >= 0) {
      results.without.push(a);
      results.with.push(b);
    }
  }
  const show = (key: 'update' | 'bulk' | 'plain') => {
    const w = results.without.map((m) => m[key]);
    const v = results.with.map((m) => m[key]);
    const f = (xs: number[]) =>
      `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
    return `${key.padEnd(7)} without ${f(w)}  with ${f(v)}  ratio ${(median(v) / median(w)).toFixed(2)}`;
  };
  console.log(`${url ? 'PostgreSQL' : 'PGlite'}, ${rounds} rounds, median (min–max):`);
  for (const key of ['update', 'bulk', 'plain'] as const) console.log(show(key));
  await db.query('Check', 'SELECT 1');
} finally {
  await db.close();
  if (serverUrl) {
    const admin = new URL(serverUrl);
    admin.pathname = '/postgres';
    await adminQuery(admin.toString(), `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
  rmSync(dataDir, { recursive: true, force: true });
}
