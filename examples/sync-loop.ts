/**
 * The recommended partner sync loop (docs/sync.md), runnable as it stands:
 *
 *   BASE=https://localhost:8443/api/external/v1 SECRET=fc_... \
 *   NODE_EXTRA_CA_CERTS=data/tls/localhost-cert.pem node --import tsx examples/sync-loop.ts [--once]
 *
 * It keeps a local copy of every listing in the secret's scope in STATE_FILE (a JSON file here; a
 * table in your own database in real life), together with the cursor to resume from. The first run
 * is the full sync; every run after it only fetches what changed. With --once it stops when it has
 * caught up, otherwise it polls every POLL_SECONDS.
 *
 * STATE_FILE defaults to forecourt-sync.json in the system's temporary directory (not the folder
 * it runs from, which is often a repository checkout); it says on stderr where it is. Set
 * STATE_FILE to keep the copy somewhere lasting.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const BASE = process.env.BASE ?? 'https://localhost:8443/api/external/v1';
const SECRET = process.env.SECRET ?? '';
const STATE_FILE = process.env.STATE_FILE || path.join(os.tmpdir(), 'forecourt-sync.json');
const POLL_SECONDS = Number(process.env.POLL_SECONDS ?? 60);
const once = process.argv.includes('--once');

interface Listing {
  id: string;
  status: string;
  updatedAt: string;
  changedAt: string;
  [field: string]: unknown;
}
interface Page {
  data: Listing[];
  pagination: { nextCursor?: string; hasMore?: boolean };
}
interface State {
  cursor: string | null;
  listings: Record<string, Listing>;
}

const load = (): State =>
  existsSync(STATE_FILE) ? JSON.parse(readFileSync(STATE_FILE, 'utf8')) : { cursor: null, listings: {} };

/** Write the copy and its cursor together (write, then rename): never a cursor ahead of the data. */
function save(state: State) {
  writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(state));
  renameSync(`${STATE_FILE}.tmp`, STATE_FILE);
}

async function fetchPage(cursor: string | null): Promise<Page> {
  // status=all: a listing that becomes sold or draft must reach the copy too, or it would stay
  // "active" there forever. The filters must be the same on every request of a cursor chain.
  const url = `${BASE}/listings?status=all&pageSize=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${SECRET}` } });
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(1000 * 2 ** attempt); // network trouble: back off and try again
      continue;
    }
    if (res.ok) return (await res.json()) as Page;
    if ((res.status === 429 || res.status >= 500) && attempt < 5) {
      const wait = Number(res.headers.get('retry-after')) || 2 ** attempt;
      await sleep(wait * 1000);
      continue;
    }
    throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  }
}

/** Follows cursors until caught up. Returns how many listings changed in the copy. */
async function catchUp(state: State): Promise<number> {
  let changed = 0;
  for (;;) {
    const page = await fetchPage(state.cursor);
    const stalled = page.pagination.hasMore && page.pagination.nextCursor === state.cursor;
    for (const listing of page.data) {
      // A listing can come twice (shown before a write still open let the cursor pass it); keep the newest.
      const known = state.listings[listing.id];
      // changedAt, the sync position: an image check's result moves it and keeps updatedAt.
      if (!known || known.changedAt <= listing.changedAt) {
        state.listings[listing.id] = listing;
        changed++;
      }
    }
    state.cursor = page.pagination.nextCursor ?? state.cursor;
    save(state);
    if (!page.pagination.hasMore) return changed;
    // More follows, but the cursor could not move: a write that began earlier is still open (at
    // most the service's write limit). Ask again shortly rather than at full speed.
    if (stalled) await sleep(250);
  }
}

if (!SECRET) throw new Error('set SECRET to your Forecourt API secret');
const state = load();
process.stderr.write(`state: ${STATE_FILE}\n`);
for (;;) {
  const changed = await catchUp(state);
  const all = Object.values(state.listings);
  const active = all.filter((l) => l.status === 'active').length;
  process.stdout.write(
    `${JSON.stringify({ at: new Date().toISOString(), changed, listings: all.length, active })}\n`,
  );
  if (once) break;
  await sleep(POLL_SECONDS * 1000);
}
