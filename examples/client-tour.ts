/**
 * A tour of the typed client (docs/client.md quotes it block by block), runnable as it stands
 * against `npm run demo` after pasting the `export` lines the demo prints:
 *
 *   node --import tsx examples/client-tour.ts
 *
 * test/client-docs.test.ts runs it against a real demo process, so the documented code works.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, ForecourtError, type ListingInput } from '@forecourt/client';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: paste the export lines \`npm run demo\` prints`);
  return value;
}
const log = (...parts: unknown[]) => console.log(...parts);

// --- create ---
const forecourt = createClient({
  baseUrl: env('FORECOURT_URL'), // https://localhost:8443
  secret: env('FORECOURT_SECRET'),
  ca: readFileSync(env('FORECOURT_CA')), // the demo's self-signed certificate
});
// 'test' with a test secret (fc_test_…): your own test data only; 'live' with a live one (fc_…).
log(`mode: ${forecourt.mode}`);
// --- end ---

// --- read ---
const { data: locations } = await forecourt.locations.list({ withCounts: true });
for (const location of locations) {
  log(location.locationCode, location.displayName, location.stats?.activeListings);
}
const gent = await forecourt.locations.get(locations.find((l) => l.locationCode === 'VDB-GENT')!.id);

const priciest = await forecourt.listings.list({ locationCode: 'VDB-GENT', pageSize: 5, sort: '-price' });
log(priciest.pagination.totalItems, 'active listings in', gent.displayName);
const first = await forecourt.listings.get(priciest.data[0]!.id);
log(first.title, first.price, first.dealer.displayName);

const enums = await forecourt.reference.enums();
log(Object.keys(enums));
// --- end ---

// --- write ---
const written = await forecourt.listings.put('TOUR-1', {
  title: 'Volkswagen Golf 1.5 TSI Life',
  price: 21950,
  brand: 'Volkswagen',
  model: 'Golf',
  year: 2021,
  fuelType: 'petrol',
  dealerLocationCode: 'VDB-GENT',
});
log(written.outcome, written.listingId); // created, then unchanged when run again

await forecourt.listings.setStatus('TOUR-1', 'pending');
await forecourt.listings.markSold('TOUR-1'); // idempotent
// --- end ---

// --- versions ---
// Two writers, one listing: a write with the version you read (ifMatch) applies only to that version.
const peugeot = await forecourt.listings.put('TOUR-V', {
  title: 'Peugeot 208 1.2 PureTech',
  price: 12450,
  dealerLocationCode: 'VDB-GENT',
});
const { listing, etag } = await forecourt.listings.getWithEtag(peugeot.listingId); // etag: peugeot.etag
const patched = await forecourt.listings.patch(
  'TOUR-V',
  { price: (listing.price ?? 12450) - 500 }, // a merge patch: only the price changes
  { ifMatch: etag },
);
log(patched.outcome, patched.etag !== etag); // updated true
try {
  await forecourt.listings.patch('TOUR-V', { price: 11500 }, { ifMatch: etag }); // the old version
} catch (error) {
  if (!(error instanceof ForecourtError) || error.status !== 412) throw error;
  log(error.code); // PRECONDITION_FAILED: read it again, apply your change to the current version
}
// --- end ---

// --- errors ---
try {
  await forecourt.listings.put('TOUR-2', { title: 'No price', price: -1, vin: 'SHORT' });
} catch (error) {
  if (!(error instanceof ForecourtError)) throw error;
  log(error.status, error.code, error.requestId); // 422 VALIDATION_FAILED 8c1f…
  for (const issue of error.issues ?? []) log(`  ${issue.path}: ${issue.message}`);
}
// --- end ---

// --- upsert-many ---
const feed: ListingInput[] = Array.from({ length: 250 }, (_, i) => ({
  externalReference: `TOUR-FEED-${i}`,
  title: `Skoda Octavia Combi #${i}`,
  price: i === 17 ? -5 : 18_000 + i * 10, // item 17 is invalid on purpose
  brand: 'Skoda',
  model: 'Octavia',
  year: 2020,
  dealerLocationCode: 'VDB-GENT',
}));

const report = await forecourt.listings.upsertMany(feed, {
  onBatch: (batch) => {
    // Called (and awaited) after each batch: save your resume point here.
    const done = batch.indices.at(-1)! + 1;
    log(`batch ${batch.batch + 1}/${batch.batches}: items up to ${done} sent`);
  },
});
log(report.created, report.updated, report.unchanged, report.failed);
for (const item of report.items) {
  if (!item.ok) log(`item ${item.index} (${item.externalReference}): ${item.code}`, item.issues);
}
// --- end ---

// --- iterate ---
// Keep a copy in sync: follow cursors, store the cursor with your data, resume from it next time.
const STATE = process.env.CURSOR_FILE ?? path.join(os.tmpdir(), 'forecourt-tour-cursor.txt');
const stored = existsSync(STATE) ? readFileSync(STATE, 'utf8') : undefined;
const changes = forecourt.listings.iterate({ status: 'all', pageSize: 200, cursor: stored });
let seen = 0;
for await (const page of changes.pages()) {
  seen += page.data.length; // save page.data in your database here...
  if (page.cursor) writeFileSync(STATE, page.cursor); // ...and its cursor with it
}
log(seen, 'listings read; next run starts after', changes.cursor);
// --- end ---
