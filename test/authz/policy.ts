/**
 * The partner API's authorization policy as one declarative table, expanded by
 * test/authz-matrix.test.ts into cells that each make one real HTTPS request.
 *
 * Sources of every expectation (nothing here is read off the implementation):
 * - docs/contract.md#presenting-a-secret and #access-scope: missing or invalid secret → 401
 *   UNAUTHORIZED; valid secret without access to the profile or listing → 403 PROFILE_FORBIDDEN.
 *   #references and #locations: 404 NOT_FOUND for a reference this partner has not got (status,
 *   DELETE) and for a location that is unknown or outside the scope (GET /locations/{id}/listings).
 * - docs/contract.md, "Authentication, scopes and access" (#presenting-a-secret, #scopes,
 *   #access-scope): missing, malformed, unknown, rotated-away or disabled secret → 401; which scope
 *   each operation needs, else 403 INSUFFICIENT_SCOPE; restricted partners see their roots and
 *   every descendant; a filter or path naming a profile outside the scope (or unknown) → 403
 *   PROFILE_FORBIDDEN on the listing endpoints, 404 on GET /locations/{id}/listings.
 * - docs/contract.md#one-listing: GET /listings/{id} → 404 when unknown or outside the scope. The
 *   scope is one of dealer profiles, not of authorship: another partner's listing at a dealer in
 *   the caller's scope is readable (docs/contract.md#access-scope: a partner sees the dealer
 *   profiles of its scope).
 * - docs/contract.md, "Writing" (#references, #dealer-of-a-listing, #status-codes): references are
 *   namespaced per partner, so status/DELETE of a reference the caller has not got → 404
 *   NOT_FOUND, and PUT of another partner's reference creates the caller's own listing (201) or is
 *   refused for the dealer named (403); the other partner's listing is never touched. A dealer
 *   outside the scope or unknown → 403 PROFILE_FORBIDDEN (bulk: that item, status 403). Bulk: 200
 *   whenever the request itself is valid.
 * - docs/api.md, "Authentication and access": GET /reference/enums needs read:listings;
 *   "Reference page": GET /api/external/v1/openapi.json needs no secret.
 * - test/auth.test.ts: the scope check comes after authentication (a bad secret is 401, not 403).
 */

export type Scope = 'read:listings' | 'read:locations' | 'write:listings';
export const ALL_SCOPES: readonly Scope[] = ['read:listings', 'read:locations', 'write:listings'];

// ─── The dealer tree ────────────────────────────────────────────────────────────────────────────

/** Node → parent. Two groups: A ─ A1 ─ A1a, A ─ A2, and the sibling group B ─ B1 (test/helpers createTree). */
export const TREE = { A: null, A1: 'A', A1a: 'A1', A2: 'A', B: null, B1: 'B' } as const;
export type Node = keyof typeof TREE;
export const NODES = Object.keys(TREE) as Node[];

/** The nodes and every descendant, at any depth. */
export function subtree(roots: readonly Node[]): Node[] {
  const inside = (n: Node): boolean => roots.includes(n) || (TREE[n] !== null && inside(TREE[n] as Node));
  return NODES.filter(inside);
}

// ─── Positions in the dealer tree ───────────────────────────────────────────────────────────────

export type Position = 'group' | 'location' | 'sibling' | 'global' | 'none';

export const POSITIONS: Record<Position, { label: string; roots: readonly Node[] | 'global' }> = {
  group: { label: 'group(A)', roots: ['A'] },
  location: { label: 'location(A1)', roots: ['A1'] },
  sibling: { label: 'sibling(B)', roots: ['B'] },
  global: { label: 'global', roots: 'global' },
  /** No partner at all (no secret, a malformed or an unknown one): nothing is in scope. */
  none: { label: 'no partner', roots: [] },
};
export const PARTNER_POSITIONS = ['group', 'location', 'sibling', 'global'] as const;

/** The nodes a position may see. */
export function scopeOf(position: Position): Node[] {
  const { roots } = POSITIONS[position];
  return roots === 'global' ? [...NODES] : subtree(roots);
}

/**
 * The dealer each caller's own listing is at (written in setup, before its credential takes its
 * final state): inside its scope, and not its root, so that the root's listings stay someone else's.
 */
export const OWN_DEALER: Record<Exclude<Position, 'none'>, Node> = {
  group: 'A2',
  location: 'A1a',
  sibling: 'B1',
  global: 'B',
};

/**
 * Each restricted caller also owns a listing outside its scope: written while the operator had
 * granted it this extra root, which was then taken away (docs/contract.md#dealer-of-a-listing: "A
 * listing whose dealer has since left the partner's scope: writes to it get 403 PROFILE_FORBIDDEN").
 */
export const OWN_OUTSIDE_DEALER: Partial<Record<Position, Node>> = {
  group: 'B1',
  location: 'A2',
  sibling: 'A1a',
};

// ─── Credential states ──────────────────────────────────────────────────────────────────────────

export type Credential =
  | 'no secret'
  | 'malformed'
  | 'unknown'
  | 'rotated'
  | 'disabled'
  | 'read:listings'
  | 'read:locations'
  | 'write:listings'
  | 'all scopes';

export const CREDENTIALS: Record<
  Credential,
  { authenticates: boolean; scopes: readonly Scope[]; perPosition: boolean; how: string }
> = {
  'no secret': { authenticates: false, scopes: [], perPosition: false, how: 'no Authorization header' },
  malformed: {
    authenticates: false,
    scopes: [],
    perPosition: false,
    how: "a real secret with its checksum's last character changed",
  },
  unknown: { authenticates: false, scopes: [], perPosition: false, how: 'a well-formed secret never issued' },
  rotated: {
    authenticates: false,
    scopes: [],
    perPosition: true,
    how: 'the old secret of an all-scopes partner after a rotation without grace',
  },
  disabled: {
    authenticates: false,
    scopes: [],
    perPosition: true,
    how: 'the secret of an all-scopes partner the operator disabled',
  },
  'read:listings': {
    authenticates: true,
    scopes: ['read:listings'],
    perPosition: true,
    how: 'that scope only',
  },
  'read:locations': {
    authenticates: true,
    scopes: ['read:locations'],
    perPosition: true,
    how: 'that scope only',
  },
  'write:listings': {
    authenticates: true,
    scopes: ['write:listings'],
    perPosition: true,
    how: 'that scope only',
  },
  'all scopes': { authenticates: true, scopes: ALL_SCOPES, perPosition: true, how: 'every scope' },
};
export const CREDENTIAL_NAMES = Object.keys(CREDENTIALS) as Credential[];

// ─── Listings that exist before the matrix runs, written by three other partners ────────────────

/** Partners that own the seeded listings and never act in a cell. */
export const SEED_WRITERS = {
  vA: { roots: ['A'] as Node[] },
  vB: { roots: ['B'] as Node[] },
  vG: { roots: 'global' as const },
};
export type SeedWriter = keyof typeof SEED_WRITERS;

export const SEEDED = {
  'A by vA': { writer: 'vA', dealer: 'A', status: 'active' },
  'A1 by vA': { writer: 'vA', dealer: 'A1', status: 'draft' },
  'A1a by vA': { writer: 'vA', dealer: 'A1a', status: 'sold' },
  'A2 by vG': { writer: 'vG', dealer: 'A2', status: 'active' },
  'A1a by vG': { writer: 'vG', dealer: 'A1a', status: 'pending' },
  'B by vB': { writer: 'vB', dealer: 'B', status: 'pending' },
  'B1 by vB': { writer: 'vB', dealer: 'B1', status: 'active' },
  'B1 by vG': { writer: 'vG', dealer: 'B1', status: 'active' },
} as const satisfies Record<string, { writer: SeedWriter; dealer: Node; status: string }>;
export type SeededKey = keyof typeof SEEDED;
export const SEEDED_KEYS = Object.keys(SEEDED) as SeededKey[];

/** Other partners' listings the cells try to write by reference: one in group A's subtree, one in B's. */
export const VICTIMS = ['A1a by vA', 'B1 by vB'] as const satisfies readonly SeededKey[];

// ─── Targets and how they relate to a position ──────────────────────────────────────────────────

export type Target =
  | { kind: 'none' }
  | { kind: 'location'; node: Node | 'unknown' }
  | { kind: 'listing'; key: SeededKey | 'own' | 'own outside' | 'unknown' }
  | { kind: 'new'; node: Node | 'unknown' };

/**
 * own: the caller's own listing; own outside: the caller's own listing at a dealer that has left its
 * scope; inside / outside: a profile, or someone else's listing, inside or outside the caller's
 * scope; unknown: an id, code or reference that does not exist; unknown to a global partner: a
 * dealer that does not exist, named in a write by a partner whose scope has no outside (issue 40:
 * it is told the dealer does not exist, 422, where a restricted partner cannot tell it from one
 * outside its scope, 403).
 */
export type Relation =
  | 'none'
  | 'own'
  | 'own outside'
  | 'inside'
  | 'outside'
  | 'unknown'
  | 'unknown to a global partner';

export function relation(target: Target, position: Position): Relation {
  const scope = scopeOf(position);
  switch (target.kind) {
    case 'none':
      return 'none';
    case 'new':
      if (target.node === 'unknown' && position === 'global') return 'unknown to a global partner';
      return target.node === 'unknown' ? 'unknown' : scope.includes(target.node) ? 'inside' : 'outside';
    case 'location':
      return target.node === 'unknown' ? 'unknown' : scope.includes(target.node) ? 'inside' : 'outside';
    case 'listing':
      if (target.key === 'own' || target.key === 'own outside' || target.key === 'unknown') return target.key;
      return scope.includes(SEEDED[target.key].dealer) ? 'inside' : 'outside';
  }
}

export function targetLabel(target: Target): string {
  switch (target.kind) {
    case 'none':
      return '';
    case 'location':
      return target.node === 'unknown' ? 'unknown profile' : `profile ${target.node}`;
    case 'new':
      return target.node === 'unknown'
        ? 'new reference at an unknown profile'
        : `new reference at ${target.node}`;
    case 'listing':
      return target.key === 'own'
        ? 'own listing'
        : target.key === 'own outside'
          ? 'own listing whose dealer left the scope'
          : target.key === 'unknown'
            ? 'unknown listing'
            : `listing ${target.key}`;
  }
}

// ─── Operations and the expected answer per relation ────────────────────────────────────────────

export interface Expect {
  status: number;
  code?: string;
  /** Bulk: the request's 200 carries this item outcome. */
  item?: { written: true } | { written: false; status: number; code: string };
}

const ok = (status = 200): Expect => ({ status });
const err = (status: number, code: string): Expect => ({ status, code });
const item = (written: Expect['item']): Expect => ({ status: 200, item: written });
const FORBIDDEN = err(403, 'PROFILE_FORBIDDEN');
const NOT_FOUND = err(404, 'NOT_FOUND');
const UNKNOWN_DEALER = err(422, 'VALIDATION_FAILED');

/** What a list reply must be confined to (checked on every item) when it is 200. */
export type Confine =
  | 'scope' // the caller's whole scope
  | 'target' // exactly the target profile
  | 'target subtree'; // the target profile and its descendants

export interface Operation {
  /** The OpenAPI operation: method and path template. */
  endpoint: string;
  /** What this row varies (a filter, a flag); part of the cell name. */
  variant?: string;
  /** null: public, no secret needed. */
  scope: Scope | null;
  phase: 'read' | 'write';
  targets: readonly Target[];
  expect: Partial<Record<Relation, Expect>>;
  /** For 200 list replies: which dealer profiles the items (or locations) may be at. */
  confine?: Confine;
  list?: 'listings' | 'locations';
}

const locations = [...NODES, 'unknown' as const].map((node) => ({ kind: 'location' as const, node }));
const news = [...NODES, 'unknown' as const].map((node) => ({ kind: 'new' as const, node }));
const listings: Target[] = [...SEEDED_KEYS, 'own' as const, 'own outside' as const, 'unknown' as const].map(
  (key) => ({ kind: 'listing', key }),
);
const byReference: Target[] = [
  { kind: 'listing', key: 'own' },
  { kind: 'listing', key: 'own outside' },
  ...VICTIMS.map((key) => ({ kind: 'listing' as const, key })),
  { kind: 'listing', key: 'unknown' },
];
const putTargets = [...news, ...byReference.filter((t) => t.kind === 'listing' && t.key !== 'unknown')];
const none: Target[] = [{ kind: 'none' }];

/**
 * Status, PATCH and DELETE by reference. References are the caller's own namespace: another partner's
 * reference is "not found", wherever its listing is; the caller's own, at a dealer now outside its
 * scope, is forbidden.
 */
const ownReferenceOnly: Operation['expect'] = {
  own: ok(),
  'own outside': FORBIDDEN,
  inside: NOT_FOUND,
  outside: NOT_FOUND,
  unknown: NOT_FOUND,
};

/**
 * THE POLICY. Order matters within the write phase: status and DELETE on a victim's reference
 * run before the PUT that gives the caller its own listing under that same reference.
 */
export const OPERATIONS: readonly Operation[] = [
  {
    endpoint: 'GET /api/external/v1/openapi.json',
    scope: null,
    phase: 'read',
    targets: none,
    expect: { none: ok() },
  },
  {
    endpoint: 'GET /listings',
    variant: 'status=all',
    scope: 'read:listings',
    phase: 'read',
    targets: none,
    expect: { none: ok() },
    list: 'listings',
    confine: 'scope',
  },
  {
    endpoint: 'GET /listings',
    variant: 'dealerId',
    scope: 'read:listings',
    phase: 'read',
    targets: locations,
    expect: { inside: ok(), outside: FORBIDDEN, unknown: FORBIDDEN },
    list: 'listings',
    confine: 'target',
  },
  {
    endpoint: 'GET /listings',
    variant: 'parentDealerId',
    scope: 'read:listings',
    phase: 'read',
    targets: locations,
    expect: { inside: ok(), outside: FORBIDDEN, unknown: FORBIDDEN },
    list: 'listings',
    confine: 'target subtree',
  },
  {
    endpoint: 'GET /listings',
    variant: 'locationCode',
    scope: 'read:listings',
    phase: 'read',
    targets: locations,
    expect: { inside: ok(), outside: FORBIDDEN, unknown: FORBIDDEN },
    list: 'listings',
    confine: 'target',
  },
  {
    endpoint: 'GET /listings/{id}',
    scope: 'read:listings',
    phase: 'read',
    targets: listings,
    // Another partner's listing at a dealer in scope is readable: the scope is of dealers.
    expect: { own: ok(), 'own outside': NOT_FOUND, inside: ok(), outside: NOT_FOUND, unknown: NOT_FOUND },
  },
  {
    endpoint: 'GET /locations',
    variant: 'withCounts=false',
    scope: 'read:locations',
    phase: 'read',
    targets: none,
    expect: { none: ok() },
    list: 'locations',
    confine: 'scope',
  },
  {
    endpoint: 'GET /locations',
    variant: 'parentId',
    scope: 'read:locations',
    phase: 'read',
    targets: locations,
    expect: { inside: ok(), outside: FORBIDDEN, unknown: FORBIDDEN },
    list: 'locations',
    confine: 'target subtree',
  },
  {
    endpoint: 'GET /locations/{id}/listings',
    variant: 'status=all',
    scope: 'read:listings',
    phase: 'read',
    targets: locations,
    expect: { inside: ok(), outside: NOT_FOUND, unknown: NOT_FOUND },
    list: 'listings',
    confine: 'target',
  },
  {
    endpoint: 'GET /locations/{id}/listings',
    variant: 'includeChildren=true',
    scope: 'read:listings',
    phase: 'read',
    targets: locations,
    expect: { inside: ok(), outside: NOT_FOUND, unknown: NOT_FOUND },
    list: 'listings',
    confine: 'target subtree',
  },
  {
    endpoint: 'GET /reference/enums',
    scope: 'read:listings',
    phase: 'read',
    targets: none,
    expect: { none: ok() },
  },
  {
    endpoint: 'POST /listings/{ref}/status',
    scope: 'write:listings',
    phase: 'write',
    targets: byReference,
    expect: ownReferenceOnly,
  },
  {
    endpoint: 'DELETE /listings/{ref}',
    scope: 'write:listings',
    phase: 'write',
    targets: byReference,
    expect: ownReferenceOnly,
  },
  {
    // A patch never creates: another partner's reference is "not found" like status and DELETE.
    endpoint: 'PATCH /listings/{ref}',
    scope: 'write:listings',
    phase: 'write',
    targets: byReference,
    expect: ownReferenceOnly,
  },
  {
    endpoint: 'PUT /listings/{ref}',
    variant: 'dealerProfileId in the body',
    scope: 'write:listings',
    phase: 'write',
    targets: putTargets,
    // Another partner's reference with its dealer in scope: the caller's own new listing (201).
    // Own listing outside the scope: refused although the body names a dealer inside it.
    expect: {
      own: ok(200),
      'own outside': FORBIDDEN,
      inside: ok(201),
      outside: FORBIDDEN,
      unknown: FORBIDDEN,
      'unknown to a global partner': UNKNOWN_DEALER,
    },
  },
  {
    endpoint: 'PUT /listings/{ref}',
    variant: 'dealerLocationCode in the body',
    scope: 'write:listings',
    phase: 'write',
    targets: news,
    expect: {
      inside: ok(201),
      outside: FORBIDDEN,
      unknown: FORBIDDEN,
      'unknown to a global partner': UNKNOWN_DEALER,
    },
  },
  {
    endpoint: 'POST /listings/bulk-upsert',
    variant: 'one item, dealer named',
    scope: 'write:listings',
    phase: 'write',
    targets: [
      ...news,
      { kind: 'listing', key: 'own outside' },
      ...VICTIMS.map((key) => ({ kind: 'listing' as const, key })),
    ],
    expect: {
      'own outside': item({ written: false, status: 403, code: 'PROFILE_FORBIDDEN' }),
      inside: item({ written: true }),
      outside: item({ written: false, status: 403, code: 'PROFILE_FORBIDDEN' }),
      unknown: item({ written: false, status: 403, code: 'PROFILE_FORBIDDEN' }),
      'unknown to a global partner': item({ written: false, status: 422, code: 'VALIDATION_FAILED' }),
    },
  },
];

// ─── The rule: credential first, then scope, then the target's relation ────────────────────────

export function expected(op: Operation, credential: Credential, position: Position, target: Target): Expect {
  if (op.scope === null) return ok(); // public
  const c = CREDENTIALS[credential];
  if (!c.authenticates) return err(401, 'UNAUTHORIZED');
  if (!c.scopes.includes(op.scope)) return err(403, 'INSUFFICIENT_SCOPE');
  const rel = relation(target, position);
  const answer = op.expect[rel];
  if (!answer) throw new Error(`policy: no answer for ${op.endpoint} ${op.variant ?? ''} on a target ${rel}`);
  return answer;
}

// ─── Expansion into cells ───────────────────────────────────────────────────────────────────────

export interface Cell {
  name: string;
  op: Operation;
  credential: Credential;
  position: Position;
  target: Target;
  relation: Relation;
  expect: Expect;
}

export function expectLabel(e: Expect): string {
  if (e.item) return e.item.written ? '200, item written' : `200, item ${e.item.status} ${e.item.code}`;
  return e.code ? `${e.status} ${e.code}` : String(e.status);
}

/**
 * Every (operation × credential × position × target). Where the answer is decided before the
 * target is looked at (401, 403 INSUFFICIENT_SCOPE) one target of each relation is enough to show
 * that the target makes no difference; everywhere else every target is a cell.
 */
export function expand(): Cell[] {
  const cells: Cell[] = [];
  for (const phase of ['read', 'write'] as const) {
    for (const credential of CREDENTIAL_NAMES) {
      const positions: Position[] = CREDENTIALS[credential].perPosition ? [...PARTNER_POSITIONS] : ['none'];
      for (const position of positions) {
        for (const op of OPERATIONS.filter((o) => o.phase === phase)) {
          const seen = new Set<Relation>();
          for (const target of op.targets) {
            // The caller-less position has no own listing, a global caller none outside its scope.
            if (target.kind === 'listing' && target.key === 'own' && position === 'none') continue;
            if (target.kind === 'listing' && target.key === 'own outside' && !OWN_OUTSIDE_DEALER[position])
              continue;
            const rel = relation(target, position);
            const e = expected(op, credential, position, target);
            const targetBlind = e.status === 401 || e.code === 'INSUFFICIENT_SCOPE';
            if (targetBlind && seen.has(rel)) continue;
            seen.add(rel);
            const what = [op.endpoint, op.variant, targetLabel(target)].filter(Boolean).join(' · ');
            const where = rel === 'inside' || rel === 'outside' ? ` (${rel})` : '';
            cells.push({
              name: `[${phase}] ${what}${where} · ${credential} · ${POSITIONS[position].label} → ${expectLabel(e)}`,
              op,
              credential,
              position,
              target,
              relation: rel,
              expect: e,
            });
          }
        }
      }
    }
  }
  return cells;
}
