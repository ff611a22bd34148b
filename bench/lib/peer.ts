import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
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
 * id), in the peer's query language; with `totalCount=true` it also counts every match.
 */
export function peerListPath(withTotals: boolean): string {
  return `/listings?limit=50&where.status.eq=active&orderby.updatedAt=asc&orderby.id=asc${withTotals ? '&totalCount=true' : ''}`;
}
