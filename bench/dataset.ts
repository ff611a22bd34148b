/**
 * Loads a synthetic marketplace straight into the database with set-based SQL (no HTTP): dealer
 * groups with locations, one writing partner, and N listings spread over the locations.
 *   npm run bench:data -- --listings 100000      (DATABASE_URL for PostgreSQL, else DATA_DIR)
 * Prints a global and a restricted partner secret for the benchmark scenarios.
 */
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config.js';
import { createPartner } from '../src/domain/partners.js';
import { createLogger } from '../src/runtime.js';
import { createServices } from '../src/services.js';
import { localContext } from '../src/store/audit.js';
import { openDb } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '100000' },
    groups: { type: 'string', default: '50' },
    locations: { type: 'string', default: '2000' },
  },
});
const listings = Number(values.listings);
const groups = Number(values.groups);
const locations = Number(values.locations);

const config = parseConfig(process.env);
const db = await openDb({
  databaseUrl: config.DATABASE_URL,
  dataDir: config.DATA_DIR,
  statementTimeoutMs: 3_600_000,
  connectTimeoutMs: 5000,
  poolSize: 2,
});
await migrate(db);
const services = createServices(config, db, {
  adminToken: 'x'.repeat(32),
  cursorKey: 'unused',
  publicOrigin: 'https://localhost:8443',
  logger: createLogger(config),
});
const started = Date.now();
const run = `b${Date.now().toString(36)}`;

// Groups, then locations under groups; a third of the locations get sub-locations (three levels).
await db.query(
  'BenchGroups',
  `INSERT INTO dealer_profiles (id, location_code, display_name, company_name, city)
   SELECT gen_random_uuid(), $1 || '-G' || g, 'Group ' || g, 'Group ' || g || ' NV', 'City ' || (g % 40)
   FROM generate_series(1, $2) g`,
  [run, groups],
);
await db.query(
  'BenchLocations',
  `INSERT INTO dealer_profiles (id, parent_id, location_code, display_name, city, postal_code)
   SELECT gen_random_uuid(),
          (SELECT id FROM dealer_profiles WHERE location_code = $1 || '-G' || (1 + l % $2)),
          $1 || '-L' || l, 'Location ' || l, 'City ' || (l % 40), lpad((1000 + l % 8999)::text, 4, '0')
   FROM generate_series(1, $3) l`,
  [run, groups, Math.round(locations * 0.75)],
);
await db.query(
  'BenchSubLocations',
  `INSERT INTO dealer_profiles (id, parent_id, location_code, display_name, city)
   SELECT gen_random_uuid(), (SELECT id FROM dealer_profiles WHERE location_code = $1 || '-L' || s),
          $1 || '-S' || s, 'Sub-location ' || s, 'City ' || (s % 40)
   FROM generate_series(1, $2) s`,
  [run, locations - Math.round(locations * 0.75)],
);
const writer = await createPartner(
  services,
  {
    name: `${run} feed`,
    scopes: ['read:listings', 'read:locations', 'write:listings'],
    access: { scope: 'global' },
  },
  localContext('bench'),
);
const group1 = (
  await db.query<{ id: string }>('G1', `SELECT id FROM dealer_profiles WHERE location_code = $1`, [
    `${run}-G1`,
  ])
)[0]!.id;
const restricted = await createPartner(
  services,
  {
    name: `${run} group 1`,
    access: { scope: 'restricted', rootProfileIds: [group1] },
  },
  localContext('bench'),
);

const BATCH = 50_000;
for (let offset = 0; offset < listings; offset += BATCH) {
  await db.query(
    'BenchListings',
    `WITH locs AS (
       SELECT id, row_number() OVER (ORDER BY location_code) - 1 AS n, count(*) OVER () AS total
       FROM dealer_profiles WHERE location_code LIKE $1 || '-%' AND parent_id IS NOT NULL
     ), brands(k, brand, model) AS (VALUES (0,'Volkswagen','Golf'),(1,'BMW','320i'),(2,'Audi','A4'),(3,'Renault','Clio'),
       (4,'Peugeot','308'),(5,'Toyota','Yaris'),(6,'Skoda','Octavia'),(7,'Kia','Niro'),(8,'Tesla','Model 3'),(9,'Ford','Focus'))
     INSERT INTO listings (id, partner_id, external_reference, dealer_profile_id, slug, status, title, price, brand, model,
       year, mileage, fuel_type, images, features, created_at, updated_at, sold_at)
     SELECT gen_random_uuid(), $2, $1 || '-' || i, locs.id, $1 || '-' || i,
            CASE WHEN i % 10 < 7 THEN 'active' WHEN i % 10 = 7 THEN 'pending' WHEN i % 10 = 8 THEN 'sold' ELSE 'draft' END,
            b.brand || ' ' || b.model, 5000 + (i::bigint * 7919) % 60000, b.brand, b.model, 2010 + i % 15, ((i::bigint * 104729) % 250000)::int,
            (ARRAY['petrol','diesel','hybrid','electric'])[1 + i % 4],
            jsonb_build_array('https://img.example/' || i || '/1.jpg', 'https://img.example/' || i || '/2.jpg'),
            '[{"category":"comfort","name":"Air conditioning"}]'::jsonb,
            now() - make_interval(secs => i), now() - make_interval(secs => ($4 - i)),
            CASE WHEN i % 10 = 8 THEN now() - make_interval(secs => ($4 - i)) END
     FROM generate_series($3::int, $3::int + $5 - 1) AS gs(i)
     JOIN locs ON locs.n = i % locs.total
     JOIN brands b ON b.k = i % 10`,
    [run, writer.id, offset, listings, Math.min(BATCH, listings - offset)],
  );
  process.stderr.write(`  ${Math.min(offset + BATCH, listings)} listings\n`);
}
if (db.kind === 'postgres') await db.query('Analyze', 'ANALYZE');
process.stdout.write(
  `${JSON.stringify({ run, listings, seconds: (Date.now() - started) / 1000, globalSecret: writer.secret, restrictedSecret: restricted.secret })}\n`,
);
await db.close();
