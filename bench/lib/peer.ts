import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import type { Measured } from './load.js';
import { type Proc, startProcess } from './processes.js';

/**
 * The peer Forecourt is measured against: Platformatic DB (bench/peer), a Fastify REST layer
 * generated from the database's schema. It needs Node.js 22, which npx fetches from the npm
 * registry (the package `node@22`) on first use, as it installs the peer (about two minutes,
 * 180 MB in bench/peer/node_modules); both are reused afterwards.
 */
const PEER = path.resolve(import.meta.dirname, '../peer');
const log = (msg: string) => process.stderr.write(`[bench peer] ${msg}\n`);

function node22(): string {
  return execFileSync('npx', ['-y', '-p', 'node@22', '--', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

function ensureInstalled(): void {
  if (existsSync(path.join(PEER, 'node_modules', '@platformatic', 'db', 'package.json'))) return;
  log('installing Platformatic DB in bench/peer (once; about two minutes)');
  execFileSync('npx', ['-y', '-p', 'node@22', '--', 'npm', 'ci', '--no-audit', '--no-fund'], {
    cwd: PEER,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Platformatic DB on `databaseUrl`, over HTTPS with the key and certificate in `tlsDir`. */
export async function startPeer(databaseUrl: string, tlsDir: string): Promise<Proc> {
  ensureInstalled();
  return startProcess({
    command: node22(),
    args: (port) => [
      path.join(PEER, 'server.mjs'),
      String(port),
      databaseUrl,
      path.join(tlsDir, 'localhost-key.pem'),
      path.join(tlsDir, 'localhost-cert.pem'),
    ],
    // Platformatic DB answers its root with a page once the schema is read and routes are up.
    ready: '/',
    label: 'bench-peer',
  });
}

/**
 * The page the list scenarios ask Forecourt for (50 active live listings, oldest change first,
 * ties by id: the list's order is `changed_at`, which an image check moves too), in the peer's
 * query language; with `totalCount=true` it also counts every match. `fields`
 * names the listing's own columns: left to itself the peer also reads and sends Forecourt's read
 * model (migration 011's `read_json` and `read_json_tail`, text Forecourt keeps to build its own
 * answers), which made its page half as large again (92 of 188 kB), a page no bare REST layer over
 * these tables would serve.
 */
export function peerListPath(withTotals: boolean, fields: readonly string[]): string {
  return `/listings?limit=50&where.status.eq=active&where.test.eq=false&orderby.changedAt=asc&orderby.id=asc&fields=${fields.join(',')}${withTotals ? '&totalCount=true' : ''}`;
}

/** The listings table's columns as the peer names them (camelCase), the read model's left out. */
export async function peerListingFields(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = 'listings'
         AND column_name NOT LIKE 'read\\_json%' ORDER BY ordinal_position`,
    );
    return rows.map((r) => r.name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));
  } finally {
    await client.end();
  }
}

/**
 * The peer's single insert, beside our `put-single`: `POST /peerListings`, one new row a request,
 * the same listing as ours (bench/lib/scenarios.ts). Its table is the peer's own: `peer_listings`,
 * made `LIKE listings` (the same columns, defaults and indexes, no triggers), its images and
 * features as `text[]` (the peer's schema takes a jsonb column only as an object, and ours hold
 * arrays). So it measures a bare REST layer's insert: a check of the body against the table's
 * types and one INSERT, without what our write keeps beside it (the read model, image rows,
 * counters, history, events, ETag, idempotency). The table is dropped afterwards.
 */
export async function peerInsert(
  databaseUrl: string,
  tlsDir: string,
  measure: (options: { url: string; requestBody: () => string }) => Promise<Measured>,
  body: (reference: string) => Record<string, unknown>,
): Promise<Measured> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const run = `PEER-${Date.now().toString(36)}`;
  let peer: Proc | undefined;
  try {
    await client.query(`DROP TABLE IF EXISTS peer_listings;
      CREATE TABLE peer_listings (LIKE listings INCLUDING DEFAULTS INCLUDING INDEXES);
      ALTER TABLE peer_listings ALTER images DROP DEFAULT, ALTER features DROP DEFAULT;
      ALTER TABLE peer_listings ALTER images TYPE text[] USING '{}', ALTER features TYPE text[] USING '{}';
      ALTER TABLE peer_listings ALTER images SET DEFAULT '{}', ALTER features SET DEFAULT '{}'`);
    const ids = await client.query<{ partner: string; dealer: string }>(
      `SELECT (SELECT id FROM partners WHERE access_scope = 'global' ORDER BY created_at LIMIT 1) AS partner,
              (SELECT id FROM dealer_profiles WHERE location_code = 'G001-L001') AS dealer`,
    );
    const { partner, dealer } = ids.rows[0]!;
    peer = await startPeer(databaseUrl, tlsDir);
    let n = 0;
    const now = () => new Date().toISOString();
    const row = () => {
      const reference = `${run}-${n++}`;
      const {
        externalReference: _,
        dealerLocationCode: __,
        firstRegistration,
        features,
        ...listing
      } = body(reference);
      return JSON.stringify({
        ...listing,
        id: randomUUID(),
        partnerId: partner,
        dealerProfileId: dealer,
        externalReference: reference,
        slug: reference.toLowerCase(),
        status: 'active',
        firstRegistration: `${firstRegistration}-01`,
        features: (features as (string | { name: string })[]).map((f) =>
          typeof f === 'string' ? f : f.name,
        ),
        // Its schema requires every NOT NULL column, those with defaults too.
        currency: 'EUR',
        conditionTags: [],
        test: false,
        createdAt: now(),
        updatedAt: now(),
        readJson: '',
        readJsonTail: '',
        changedAt: now(),
      });
    };
    const url = `${peer.url}/peerListings`;
    // One insert first: a ratio only means something if the peer really inserts.
    const first = await request(url, {
      dispatcher: peer.dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: row(),
    });
    const answer = await first.body.text();
    if (first.statusCode !== 200)
      throw new Error(`the peer refused an insert (status ${first.statusCode}): ${answer.slice(0, 500)}`);
    const measured = await measure({ url, requestBody: row });
    if (measured.errors > 0) throw new Error(`the peer answered ${measured.errors} inserts with errors`);
    const inserted = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM peer_listings');
    if (inserted.rows[0]!.n < measured.requests)
      throw new Error(
        `the peer answered ${measured.requests} inserts but ${inserted.rows[0]!.n} rows are there`,
      );
    return measured;
  } finally {
    await peer?.stop();
    await client.query('DROP TABLE IF EXISTS peer_listings');
    await client.end();
  }
}
