/**
 * A realistic marketplace, loaded straight into the database with set-based SQL (no HTTP):
 * 50 dealer groups (half of two levels, half of three) with 2,000 locations, and N listings over
 * those locations with realistic brands, prices by age, mileage, images, features and a mix of
 * statuses, plus their status history. Meant for an empty database.
 *
 *   npm run bench:data -- --listings 1000000          (DATABASE_URL for PostgreSQL, else DATA_DIR)
 *
 * Writes the partners' secrets and the ids the scenarios need to bench/.data/<name>.json (and
 * stdout): a global partner (writes every listing), one restricted to a group (~2% of listings),
 * and one whose scope spans about 500 locations.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compose } from '../src/compose.js';
import { parseConfig } from '../src/config.js';
import type { Scope } from '../src/domain/access.js';
import { localContext } from '../src/store/audit.js';
import { migrate } from '../src/store/migrate.js';
import { openDb } from '../src/store/open.js';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '100000' },
    groups: { type: 'string', default: '50' },
    'locations-per-group': { type: 'string', default: '40' },
    out: { type: 'string' },
  },
});
const listings = Number(values.listings);
const groups = Number(values.groups);
const perGroup = Number(values['locations-per-group']);

const config = parseConfig(process.env);
const db = await openDb({
  databaseUrl: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  statementTimeoutMs: 3_600_000,
  connectTimeoutMs: 5000,
  poolSize: 2,
});
await migrate(db);
const existing = await db.query<{ n: number }>('Existing', 'SELECT count(*)::int AS n FROM listings');
if (existing[0]!.n > 0) throw new Error('bench:data expects an empty database (it has listings)');
const useCases = compose(config, db, { cursorKey: 'unused', publicOrigin: 'https://localhost:8443' });
const started = Date.now();
const log = (msg: string) =>
  process.stderr.write(`  ${((Date.now() - started) / 1000).toFixed(1)} s  ${msg}\n`);

// --- Dealer tree: group → location (groups 1..n/2), group → location → sub-location (the rest).
await db.query(
  'BenchGroups',
  `INSERT INTO dealer_profiles (id, location_code, company_name, display_name, city, province)
   SELECT gen_random_uuid(), 'G' || lpad(g::text, 3, '0'), (ARRAY['Autohaus','Garage','Motors','Auto Groep','Cars'])[1 + g % 5] || ' ' || g || ' NV',
          'Group ' || g, (ARRAY['Gent','Antwerpen','Brussel','Utrecht','Rotterdam','Leuven','Brugge','Eindhoven'])[1 + g % 8],
          (ARRAY['Oost-Vlaanderen','Antwerpen','Brussel','Utrecht','Zuid-Holland','Vlaams-Brabant','West-Vlaanderen','Noord-Brabant'])[1 + g % 8]
   FROM generate_series(1, $1) g`,
  [groups],
);
const threeLevelFrom = Math.floor(groups / 2) + 1;
// Two-level groups have perGroup locations; three-level ones perGroup/2 locations with one sub-location each.
await db.query(
  'BenchLocations',
  `INSERT INTO dealer_profiles (id, parent_id, location_code, display_name, city, postal_code, province)
   SELECT gen_random_uuid(), g.id, g.location_code || '-L' || lpad(l::text, 3, '0'), g.display_name || ' location ' || l,
          g.city, lpad((1000 + (hashint4(l * 7 + gn) & 8191))::text, 4, '0'), g.province
   FROM (SELECT id, location_code, display_name, city, province, substr(location_code, 2)::int AS gn FROM dealer_profiles WHERE parent_id IS NULL) g,
        generate_series(1, CASE WHEN g.gn >= $2 THEN $1 / 2 ELSE $1 END) l`,
  [perGroup, threeLevelFrom],
);
await db.query(
  'BenchSubLocations',
  `INSERT INTO dealer_profiles (id, parent_id, location_code, display_name, city, postal_code, province)
   SELECT gen_random_uuid(), l.id, l.location_code || '-S', l.display_name || ' used-car centre', l.city, l.postal_code, l.province
   FROM dealer_profiles l JOIN dealer_profiles g ON g.id = l.parent_id
   WHERE g.parent_id IS NULL AND substr(g.location_code, 2)::int >= $1`,
  [threeLevelFrom],
);
log('dealer tree');

// --- Partners.
const scenarioScopes: Scope[] = ['read:listings', 'read:locations', 'write:listings'];
const writer = await useCases.partners.create(
  { name: 'Bench feed (global)', scopes: scenarioScopes, access: { scope: 'global' } },
  localContext('bench'),
);
const groupRows = await db.query<{ id: string; code: string }>(
  'Groups',
  `SELECT id, location_code AS code FROM dealer_profiles WHERE parent_id IS NULL ORDER BY location_code`,
);
const restricted = await useCases.partners.create(
  {
    name: 'Bench group partner',
    scopes: scenarioScopes,
    access: { scope: 'restricted', rootProfileIds: [groupRows[0]!.id] },
  },
  localContext('bench'),
);
// Enough groups for about 500 locations (each group holds perGroup of them).
const wideRoots = groupRows.slice(0, Math.ceil(500 / perGroup)).map((g) => g.id);
const wide = await useCases.partners.create(
  {
    name: 'Bench wide partner',
    scopes: scenarioScopes,
    access: { scope: 'restricted', rootProfileIds: wideRoots },
  },
  localContext('bench'),
);

// --- Listings, in batches of one statement each. The secondary indexes are dropped for the load
// and built afterwards: one sort per index instead of a million random inserts.
const indexes = await db.query<{ name: string; def: string }>(
  'ListingIndexes',
  `SELECT indexname AS name, indexdef AS def FROM pg_indexes
   WHERE tablename IN ('listings', 'listing_status_history') AND indexdef NOT LIKE '%UNIQUE%'`,
);
for (const index of indexes) await db.query('DropIndex', `DROP INDEX ${index.name}`);

const MODELS = `(VALUES
  (0,'Volkswagen','Golf','hatchback',27000),(1,'Volkswagen','Polo','hatchback',19000),(2,'Volkswagen','Tiguan','suv',36000),
  (3,'BMW','3 Series','sedan',42000),(4,'BMW','X1','suv',40000),(5,'Audi','A3','hatchback',33000),(6,'Audi','Q5','suv',52000),
  (7,'Mercedes-Benz','C-Class','sedan',45000),(8,'Mercedes-Benz','A-Class','hatchback',34000),(9,'Renault','Clio','hatchback',18000),
  (10,'Renault','Captur','suv',24000),(11,'Peugeot','208','hatchback',19000),(12,'Peugeot','3008','suv',32000),
  (13,'Toyota','Yaris','hatchback',20000),(14,'Toyota','RAV4','suv',38000),(15,'Skoda','Octavia','station_wagon',29000),
  (16,'Kia','Niro','suv',31000),(17,'Tesla','Model 3','sedan',45000),(18,'Ford','Focus','hatchback',25000),
  (19,'Opel','Corsa','hatchback',18000),(20,'Volvo','XC60','suv',50000),(21,'Hyundai','Tucson','suv',33000),
  (22,'Citroën','C3','hatchback',17000),(23,'Fiat','500','hatchback',16000),(24,'Dacia','Sandero','hatchback',13000)
) AS m(k, brand, model, body_type, base_price)`;
const FEATURES = `ARRAY['{"category":"comfort","name":"Air conditioning"}','{"category":"comfort","name":"Heated seats"}',
  '{"category":"comfort","name":"Adaptive cruise control"}','{"category":"multimedia","name":"Navigation"}',
  '{"category":"multimedia","name":"Apple CarPlay"}','{"category":"multimedia","name":"DAB radio"}',
  '{"category":"safety","name":"Lane assist"}','{"category":"safety","name":"Parking camera"}',
  '{"category":"safety","name":"Blind spot monitor"}','{"category":"exterior","name":"Alloy wheels"}',
  '{"category":"exterior","name":"LED headlights"}','{"category":"exterior","name":"Tow bar"}']::jsonb[]`;

const BATCH = 100_000;
for (let offset = 0; offset < listings; offset += BATCH) {
  const size = Math.min(BATCH, listings - offset);
  await db.query(
    'BenchListings',
    `WITH locs AS (
       SELECT id, postal_code, city, province, (row_number() OVER (ORDER BY location_code) - 1)::int AS n
       FROM dealer_profiles WHERE parent_id IS NOT NULL
     ), nlocs AS (SELECT count(*)::int AS total FROM locs),
     src AS (
       SELECT i, hashint4(i) AS h1, hashint4(i + 7919) AS h2, hashint4(i + 104729) AS h3
       FROM generate_series($2::int, $2::int + $3 - 1) AS gs(i)
     ),
     cars AS (
       SELECT src.*, m.*, 2008 + (h1 & 1023) % 18 AS year,
              CASE WHEN (h2 & 1023) % 100 < 72 THEN 'active' WHEN (h2 & 1023) % 100 < 78 THEN 'pending'
                   WHEN (h2 & 1023) % 100 < 93 THEN 'sold' ELSE 'draft' END AS status,
              now() - make_interval(secs => ((h3 & 1073741823) % (120 * 86400))::float8) AS updated,
              locs.id AS dealer, locs.postal_code, locs.city, locs.province
       FROM src CROSS JOIN nlocs
       JOIN ${MODELS} ON m.k = (h1 >> 10 & 1023) % 25
       JOIN locs ON locs.n = src.i % nlocs.total
     )
     INSERT INTO listings (id, partner_id, external_reference, dealer_profile_id, slug, status, title, description,
       price, brand, model, year, mileage, fuel_type, transmission, body_type, color, doors, seats, power_kw,
       first_registration, previous_owners, warranty, warranty_months, vehicle_type, condition_tags,
       postal_code, city, province, images, features, created_at, updated_at, sold_at)
     SELECT gen_random_uuid(), $1, 'STOCK-' || lpad(i::text, 8, '0'), dealer,
            lower(replace(brand || '-' || model, ' ', '-')) || '-' || year || '-' || i, status,
            brand || ' ' || model || ' ' || year,
            'Well maintained ' || brand || ' ' || model || ', full service history, ' || (2026 - year) || ' years old.',
            round((base_price * power(0.88, 2026 - year) * (0.85 + ((h2 >> 10) & 1023) / 1023.0 * 0.3)) / 50) * 50,
            brand, model, year, greatest(10, (2026 - year) * (8000 + (h3 >> 10 & 16383)))::int,
            CASE WHEN brand = 'Tesla' THEN 'electric' ELSE (ARRAY['petrol','petrol','diesel','hybrid','plugin_hybrid','electric','lpg'])[1 + (h1 >> 20 & 1023) % 7] END,
            CASE WHEN (h2 >> 20 & 1) = 1 THEN 'automatic' ELSE 'manual' END, body_type,
            (ARRAY['black','white','grey','silver','blue','red','green'])[1 + (h3 >> 20 & 1023) % 7],
            CASE WHEN body_type = 'coupe' THEN 2 ELSE 5 END, 5, 55 + (h1 >> 5 & 127),
            make_date(year, 1 + (h2 >> 5 & 1023) % 12, 1), least(2026 - year, (h3 >> 5) & 3),
            (h1 & 1) = 1, 12, CASE WHEN (h2 & 3) = 0 THEN 'vat_deductible' ELSE 'margin' END,
            ARRAY['used'] || CASE WHEN (h3 & 3) <> 0 THEN ARRAY['accident_free'] ELSE ARRAY[]::text[] END,
            postal_code, city, province,
            (SELECT jsonb_agg('https://images.example.com/stock/' || i || '/' || n || '.jpg')
             FROM generate_series(1, 3 + (h1 >> 25 & 7)) n),
            (SELECT coalesce(jsonb_agg(f), '[]'::jsonb) FROM unnest(${FEATURES}) WITH ORDINALITY AS t(f, o)
             WHERE (h2 >> (o::int) & 1) = 1),
            updated - make_interval(days => (h1 >> 12 & 127)), updated, CASE WHEN status = 'sold' THEN updated END
     FROM cars`,
    [writer.id, offset, size],
  );
  log(`${offset + size} listings`);
}
await db.query(
  'BenchHistory',
  `INSERT INTO listing_status_history (listing_id, dealer_profile_id, status, changed_at)
   SELECT id, dealer_profile_id, status, updated_at FROM listings`,
);
// History starts before the oldest change, so location stats include last month's average.
await db.query('HistoryStart', `UPDATE service_info SET history_started_at = now() - interval '150 days'`);
log('status history');
for (const index of indexes) await db.query('CreateIndex', index.def);
log('indexes');
// VACUUM sets the visibility map, so list counts can be index-only scans as on a settled database.
// Every table, as autovacuum leaves a database in service: the counters, images and checks the
// trigger filled too. With statistics for only some tables (CI's server runs without
// autovacuum), plans over the others rest on default guesses that no deployment sees.
await db.query('VacuumAnalyze', 'VACUUM ANALYZE');
log('vacuum analyze');

const result = {
  listings,
  locations: Number(
    (
      await db.query<{ n: number }>(
        'N',
        'SELECT count(*)::int AS n FROM dealer_profiles WHERE parent_id IS NOT NULL',
      )
    )[0]!.n,
  ),
  seconds: (Date.now() - started) / 1000,
  database: db.kind,
  globalSecret: writer.secret,
  restrictedSecret: restricted.secret,
  restrictedGroupId: groupRows[0]!.id,
  wideSecret: wide.secret,
  wideRootIds: wideRoots,
  writerId: writer.id,
};
const out =
  values.out ??
  path.resolve(
    import.meta.dirname,
    '.data',
    `${config.DATABASE_URL ? new URL(config.DATABASE_URL).pathname.slice(1) : 'embedded'}.json`,
  );
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
await db.close();
