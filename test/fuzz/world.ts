import assert from 'node:assert/strict';
import { generateSecret } from '../../src/domain/secrets.js';
import { ALL_SCOPES, createPartner, createTree, type TestApp, type Tree, unique } from '../helpers/app.js';
import { PREFIX } from './document.js';

/**
 * What the fuzzer sends requests against: a small dealer tree (A ─ A1 ─ A1a, A ─ A2; B ─ B1), a
 * writer with every scope restricted to A, a read-only partner with global access, and another
 * writer on B whose listings and references the first must never reach. Generated cases name
 * these by token (⟪dealer:A1⟫, ⟪code:A2⟫, ⟪listing:w0⟫, ⟪cursor:w⟫), resolved when sent, so a
 * corpus case replays on any database.
 */

export type Who = 'writer' | 'writer-key' | 'reader' | 'none' | 'unknown-secret' | 'malformed';

export interface World {
  app: TestApp;
  tree: Tree;
  secrets: { writer: string; reader: string; other: string; unknown: string };
  /** Listing ids: w* the writer's (in A's subtree), o* the other writer's (in B). */
  listings: Record<string, string>;
  /** A nextCursor of GET /listings with the default filters. */
  cursor: string;
}

export const DEALERS = ['A', 'A1', 'A1a', 'A2', 'B', 'B1'] as const;
export const WRITER_SCOPE = new Set(['A', 'A1', 'A1a', 'A2']);
/** References the writer has (created before the run); status changes and deletes keep them. */
export const WRITER_REFS = ['fz-stock-1', 'fz-stock-2', 'fz-stock-3', 'FZ/4 ü', 'fz-sold-5'];
/** References only the other writer has: the writer must get 404 for them. */
export const OTHER_REFS = ['fz-other-1', 'fz-stock-9'];
export const LISTING_TOKENS = ['w0', 'w1', 'w2', 'w3', 'w4', 'o0', 'o1'];

export async function buildWorld(app: TestApp): Promise<World> {
  const tree = await createTree(app);
  const writer = await createPartner(app, {
    roots: [tree.ids.A!],
    scopes: [...ALL_SCOPES, 'manage:webhooks'],
    name: unique('fuzz-writer'),
  });
  const reader = await createPartner(app, { global: true, name: unique('fuzz-reader') });
  const other = await createPartner(app, {
    roots: [tree.ids.B!],
    scopes: ALL_SCOPES,
    name: unique('fuzz-other'),
  });
  const listings: Record<string, string> = {};
  const dealersW = ['A', 'A1', 'A1a', 'A2', 'A1'];
  for (const [i, ref] of WRITER_REFS.entries()) {
    listings[`w${i}`] = await put(app, writer.secret, ref, {
      title: `Fuzz seed ${i}`,
      price: 1000 + i,
      status: i === 4 ? 'sold' : 'active',
      dealerProfileId: tree.ids[dealersW[i]!],
    });
  }
  for (const [i, ref] of OTHER_REFS.entries()) {
    listings[`o${i}`] = await put(app, other.secret, ref, { title: `Other ${i}`, price: 500 + i });
  }
  const page = await app.call('GET', `${PREFIX}/listings?pageSize=2`, { secret: writer.secret });
  assert.equal(page.status, 200, page.text);
  return {
    app,
    tree,
    secrets: { writer: writer.secret, reader: reader.secret, other: other.secret, unknown: generateSecret() },
    listings,
    cursor: page.body.pagination.nextCursor,
  };
}

async function put(app: TestApp, secret: string, ref: string, body: unknown): Promise<string> {
  const reply = await app.call('PUT', `${PREFIX}/listings/${encodeURIComponent(ref)}`, { secret, body });
  assert.ok(reply.status === 201 || reply.status === 200, reply.text);
  return reply.body.data.listingId;
}

/** Whether a dealer (by tree key) is in a partner's access scope. */
export function dealerInScope(who: Who, key: string): boolean {
  return who === 'reader' || WRITER_SCOPE.has(key);
}

/** Whether a listing (by token) is visible to a partner. */
export function listingVisible(who: Who, token: string): boolean {
  return who === 'reader' || token.startsWith('w');
}

const TOKEN = /⟪(dealer|code|listing|cursor):([A-Za-z0-9]+)(?::(upper|lower))?⟫/g;

/** Replaces every token in a string by what it stands for in this world. */
export function resolveText(world: World, text: string): string {
  return text.replace(TOKEN, (_all, kind: string, key: string, change?: string) => {
    const value =
      kind === 'dealer'
        ? world.tree.ids[key]
        : kind === 'code'
          ? world.tree.codes[key]
          : kind === 'listing'
            ? world.listings[key]
            : world.cursor;
    if (value === undefined) throw new Error(`fuzz: unknown token ${kind}:${key}`);
    return change === 'upper' ? value.toUpperCase() : change === 'lower' ? value.toLowerCase() : value;
  });
}

/** resolveText over every string of a JSON value (keys included). */
export function resolveDeep(world: World, value: unknown): unknown {
  if (typeof value === 'string') return resolveText(world, value);
  if (Array.isArray(value)) return value.map((v) => resolveDeep(world, v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [resolveText(world, k), resolveDeep(world, v)]),
    );
  }
  return value;
}

/** The authentication headers of a partner, or of a broken attempt. */
export function authHeaders(world: World, who: Who): Record<string, string> {
  switch (who) {
    case 'writer':
      return { authorization: `Bearer ${world.secrets.writer}` };
    case 'writer-key':
      return { 'x-api-key': world.secrets.writer };
    case 'reader':
      return { authorization: `bearer  ${world.secrets.reader} ` };
    case 'none':
      return {};
    case 'unknown-secret':
      return { authorization: `Bearer ${world.secrets.unknown}` };
    case 'malformed':
      return { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` };
  }
}
