import { createPartner, createTree, type TestApp, unique } from '../helpers/app.js';
import { WRITE_SCOPES } from '../helpers/write-fixtures.js';

/**
 * The dealer tree of every run (test/helpers/app.ts createTree):
 *   A ─ A1 ─ A1a        B ─ B1
 *     └ A2
 * and the partners writing into it, with overlapping, nested and disjoint scopes.
 */
export const DEALERS = ['A', 'A1', 'A1a', 'A2', 'B', 'B1'] as const;
export type DealerKey = (typeof DEALERS)[number];
const PARENT: Record<DealerKey, DealerKey | null> = {
  A: null,
  A1: 'A',
  A1a: 'A1',
  A2: 'A',
  B: null,
  B1: 'B',
};

export type PartnerKey = 'P1' | 'P2' | 'P3';
export interface Layout {
  name: string;
  /** Roots of each partner (restricted access), or 'global'. */
  partners: Partial<Record<PartnerKey, readonly DealerKey[] | 'global'>>;
}

export const LAYOUTS: readonly Layout[] = [
  // P1 and P2 overlap on A1's subtree, P1 and P3 are disjoint, P3 lies inside P2; P2 has two roots (no default dealer).
  { name: 'P1=[A] P2=[A1,B] P3=[B]', partners: { P1: ['A'], P2: ['A1', 'B'], P3: ['B'] } },
  // Two partners, one nested in the other.
  { name: 'P1=[A,B] P2=[A1]', partners: { P1: ['A', 'B'], P2: ['A1'] } },
  // A global partner (sees and may write everywhere, no default dealer) beside two restricted ones.
  { name: 'P1=[A] P2=global P3=[B1]', partners: { P1: ['A'], P2: 'global', P3: ['B1'] } },
];

export const partnersOf = (layout: Layout) => Object.keys(layout.partners).sort() as PartnerKey[];

/** The dealer and every ancestor of it. */
function lineage(dealer: DealerKey): DealerKey[] {
  const parent = PARENT[dealer];
  return parent ? [dealer, ...lineage(parent)] : [dealer];
}

/** Read and write scope alike: the partner's roots and every descendant, at any depth. */
export function inScope(layout: Layout, p: PartnerKey, dealer: DealerKey): boolean {
  const roots = layout.partners[p]!;
  return roots === 'global' || lineage(dealer).some((d) => roots.includes(d));
}

/** The dealer of a new listing that names none: the partner's only root profile, if it has exactly one. */
export function defaultDealer(layout: Layout, p: PartnerKey): DealerKey | undefined {
  const roots = layout.partners[p]!;
  return roots !== 'global' && roots.length === 1 ? roots[0] : undefined;
}

/** The real side of a run: a fresh dealer tree and fresh partners, so references start empty. */
export interface World {
  app: TestApp;
  layout: Layout;
  dealerId: Record<DealerKey, string>;
  dealerCode: Record<DealerKey, string>;
  dealerKey: Map<string, DealerKey>;
  secret: Record<PartnerKey, string>;
  partnerKey: Map<string, PartnerKey>;
  /** Before the run's first write: every listing of an earlier run was last updated before it. */
  startedAt: Date;
}

export async function createWorld(app: TestApp, layout: Layout): Promise<World> {
  const startedAt = new Date();
  const tree = await createTree(app);
  const dealerId = tree.ids as Record<DealerKey, string>;
  const dealerCode = tree.codes as Record<DealerKey, string>;
  const secret = {} as Record<PartnerKey, string>;
  const partnerKey = new Map<string, PartnerKey>();
  for (const p of partnersOf(layout)) {
    const roots = layout.partners[p]!;
    const name = unique(`model-${p}`);
    const created = await createPartner(app, {
      name,
      scopes: WRITE_SCOPES,
      ...(roots === 'global' ? { global: true } : { roots: roots.map((d) => dealerId[d]) }),
    });
    secret[p] = created.secret;
    // externalProvider on a listing is the name of the partner that wrote it.
    partnerKey.set(name, p);
  }
  const dealerKey = new Map(Object.entries(dealerId).map(([k, id]) => [id, k as DealerKey]));
  return { app, layout, dealerId, dealerCode, dealerKey, secret, partnerKey, startedAt };
}
