import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
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
 * The page the list scenarios ask Forecourt for (50 active listings, oldest change first, ties by
 * id), in the peer's query language; with `totalCount=true` it also counts every match. `fields`
 * names the listing's own columns: left to itself the peer also reads and sends Forecourt's read
 * model (migration 011's `read_json` and `read_json_tail`, text Forecourt keeps to build its own
 * answers), which made its page half as large again (92 of 188 kB), a page no bare REST layer over
 * these tables would serve.
 */
export function peerListPath(withTotals: boolean, fields: readonly string[]): string {
  return `/listings?limit=50&where.status.eq=active&orderby.updatedAt=asc&orderby.id=asc&fields=${fields.join(',')}${withTotals ? '&totalCount=true' : ''}`;
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
