/**
 * An in-memory model of the write and read rules of the partner API, derived from docs/contract.md
 * (#put-replaces, #dealer-of-a-listing, #price-rule, …) and docs/api.md, not from src/:
 *
 * - References are namespaced per partner; a listing belongs to the partner that wrote it.
 * - PUT replaces every writable field; an omitted status keeps the current one (a new listing is
 *   active), an omitted dealer keeps the current one (a new listing: the partner's only root, else
 *   422 at dealerProfileId). A named dealer outside the partner's scope: 403 PROFILE_FORBIDDEN.
 *   price is required when the resulting status is active or pending (422).
 * - Outcomes: created (201), updated, unchanged (same content: updatedAt does not move).
 * - Bulk: each item on its own; a reference repeated in one request: the last occurrence that
 *   succeeds wins, the earlier successful ones are `superseded` (supersededBy = the winner's index,
 *   the winner's listingId and status), the failing ones are errors at their own index. Every item
 *   is in `results` or in `errors`.
 * - POST status: any status to any status; DELETE = status sold, idempotent. Unknown reference for
 *   this partner: 404. Moving a listing without a price to active or pending: 422 (the price
 *   rule). Entering sold sets soldAt, staying sold keeps it, leaving clears it.
 * - Reads: GET /listings?mine=true&status=all shows exactly this partner's listings;
 *   GET /listings shows every partner's listings whose dealer is in the reader's scope (the
 *   dealer subtree of its roots); GET /listings/{id} is 404 outside the scope.
 *
 * Values the service chooses (ids, timestamps) are logic variables (`Var`), bound to what the
 * service answers the first time they are observed and compared from then on.
 */

import type { DealerKey, Layout, PartnerKey } from './world.js';
import { defaultDealer, inScope } from './world.js';

export const STATUSES = ['active', 'pending', 'sold', 'draft'] as const;
export type Status = (typeof STATUSES)[number];

/** A value the service picks: an id or a timestamp, unknown until observed. */
export class Var {
  constructor(
    readonly name: string,
    readonly kind: 'id' | 'time',
  ) {}
  toString() {
    return `?${this.name}`;
  }
}
export type V = string | Var;

export interface Listing {
  id: V;
  owner: PartnerKey;
  ref: string;
  dealer: DealerKey;
  status: Status;
  title: string;
  price: number | null;
  mileage: number | null;
  createdAt: V;
  updatedAt: V;
  soldAt: V | null;
}

/** Listings by `${owner}\u0000${ref}`; listing objects are never mutated, only replaced. */
export type State = ReadonlyMap<string, Listing>;
export const key = (owner: PartnerKey, ref: string) => `${owner}\u0000${ref}`;

export interface Body {
  title: string;
  price?: number;
  mileage?: number;
  status?: Status;
  dealer?: { by: 'id' | 'code'; key: DealerKey };
}
export interface Item {
  /** undefined: the item has no externalReference at all. */
  ref?: string;
  body: Body;
}

export type Op =
  | { kind: 'put'; p: PartnerKey; ref: string; body: Body }
  | { kind: 'bulk'; p: PartnerKey; items: Item[] }
  | { kind: 'status'; p: PartnerKey; ref: string; status: Status | 'archived' }
  | { kind: 'delete'; p: PartnerKey; ref: string }
  | { kind: 'readMine'; p: PartnerKey }
  | { kind: 'readScope'; p: PartnerKey; status: 'all' | 'active' }
  /** target: a listing known before the step (by owner and reference), or null: an id that never existed. */
  | { kind: 'get'; p: PartnerKey; target: { owner: PartnerKey; ref: string } | null; id?: string };

/** A reply as the model predicts it and as the test normalises the service's answer. */
export type Reply = Record<string, unknown>;

const CONTENT = ['dealer', 'status', 'title', 'price', 'mileage'] as const;

/** Lists sorted by owner, then reference: their order on the wire is checked separately. */
const byOwnerRef = (a: Listing, b: Listing) => key(a.owner, a.ref).localeCompare(key(b.owner, b.ref));

export class Simulation {
  private n = 0;
  constructor(readonly layout: Layout) {}
  fresh(kind: 'id' | 'time', what: string): Var {
    return new Var(`${what}#${++this.n}`, kind);
  }

  /** Applies one operation to `state`: the next state and the reply the rules demand. */
  apply(state: State, op: Op): { state: State; reply: Reply } {
    switch (op.kind) {
      case 'put': {
        const { state: next, results, errors } = this.upsert(state, op.p, [{ ref: op.ref, body: op.body }]);
        const failed = errors[0];
        if (failed) return { state: next, reply: { http: failed.status, code: failed.code } };
        const { index: _i, ...data } = results[0]!;
        return { state: next, reply: { http: data.created ? 201 : 200, data } };
      }
      case 'bulk': {
        const { state: next, results, errors } = this.upsert(state, op.p, op.items);
        return {
          state: next,
          reply: { http: 200, successCount: results.length, errorCount: errors.length, results, errors },
        };
      }
      case 'status':
      case 'delete': {
        const status = op.kind === 'delete' ? 'sold' : op.status;
        if (status === 'archived') return { state, reply: { http: 422, code: 'VALIDATION_FAILED' } };
        const current = state.get(key(op.p, op.ref));
        if (!current) return { state, reply: { http: 404, code: 'NOT_FOUND' } };
        // The price rule holds for status changes too (docs/contract.md#price-rule: required when the
        // resulting status needs it).
        if ((status === 'active' || status === 'pending') && current.price === null)
          return { state, reply: { http: 422, code: 'VALIDATION_FAILED' } };
        const next = new Map(state);
        const changed = current.status !== status;
        if (changed) next.set(key(op.p, op.ref), this.moved(current, { ...current, status }));
        const outcome = changed ? 'updated' : 'unchanged';
        return {
          state: next,
          reply: { http: 200, data: { listingId: current.id, externalReference: op.ref, status, outcome } },
        };
      }
      case 'readMine':
        return {
          state,
          reply: {
            http: 200,
            listings: [...state.values()].filter((l) => l.owner === op.p).sort(byOwnerRef),
          },
        };
      case 'readScope':
        return {
          state,
          reply: {
            http: 200,
            listings: [...state.values()]
              .filter((l) => inScope(this.layout, op.p, l.dealer))
              .filter((l) => op.status === 'all' || l.status === op.status)
              .sort(byOwnerRef),
          },
        };
      case 'get': {
        const found = [...state.values()].find((l) => l.id === op.id);
        return found && inScope(this.layout, op.p, found.dealer)
          ? { state, reply: { http: 200, listing: found } }
          : { state, reply: { http: 404, code: 'NOT_FOUND' } };
      }
    }
  }

  /**
   * A listing whose content changed: updatedAt takes a new value, any timestamp (it is the writing
   * transaction's start, so a write that waited on another's lock may carry an earlier one; sync
   * copes through its horizon, docs/sync.md). soldAt: set on entering sold, kept while sold.
   */
  private moved(before: Listing, after: Listing): Listing {
    const what = `${after.owner}/${after.ref}`;
    return {
      ...after,
      updatedAt: this.fresh('time', `updatedAt ${what}`),
      soldAt:
        after.status !== 'sold'
          ? null
          : before.status === 'sold'
            ? before.soldAt
            : this.fresh('time', `soldAt ${what}`),
    };
  }

  /** PUT and bulk upsert: the per-item rules, then "the last successful occurrence wins". */
  private upsert(state: State, p: PartnerKey, items: readonly Item[]) {
    const errors: { index: number; externalReference?: string; code: string; status: number }[] = [];
    const results: Record<string, unknown>[] = [];
    const byRef = new Map<string, { index: number; body: Body }[]>();
    for (const [index, item] of items.entries()) {
      if (item.ref === undefined) {
        errors.push({ index, code: 'INVALID_REFERENCE', status: 400 });
        continue;
      }
      const fail = (code: string, status: number) =>
        errors.push({ index, externalReference: item.ref, code, status });
      if (item.body.title.trim() === '') fail('VALIDATION_FAILED', 422);
      else if (item.body.dealer && !inScope(this.layout, p, item.body.dealer.key))
        fail('PROFILE_FORBIDDEN', 403);
      else byRef.set(item.ref, [...(byRef.get(item.ref) ?? []), { index, body: item.body }]);
    }
    const next = new Map(state);
    for (const [ref, candidates] of byRef) {
      const current = state.get(key(p, ref));
      const passed: { index: number; content: Pick<Listing, (typeof CONTENT)[number]> }[] = [];
      for (const c of candidates) {
        const content = this.content(p, c.body, current);
        if (content) passed.push({ index: c.index, content });
        else errors.push({ index: c.index, externalReference: ref, code: 'VALIDATION_FAILED', status: 422 });
      }
      const winner = passed.at(-1);
      if (!winner) continue;
      let listing: Listing;
      let outcome: 'created' | 'updated' | 'unchanged';
      if (!current) {
        const what = `${p}/${ref}`;
        listing = {
          id: this.fresh('id', `id ${what}`),
          owner: p,
          ref,
          ...winner.content,
          createdAt: this.fresh('time', `createdAt ${what}`),
          updatedAt: this.fresh('time', `updatedAt ${what}`),
          soldAt: winner.content.status === 'sold' ? this.fresh('time', `soldAt ${what}`) : null,
        };
        outcome = 'created';
      } else if (CONTENT.every((f) => current[f] === winner.content[f])) {
        listing = current;
        outcome = 'unchanged';
      } else {
        listing = this.moved(current, { ...current, ...winner.content });
        outcome = 'updated';
      }
      next.set(key(p, ref), listing);
      const shown = { externalReference: ref, listingId: listing.id, status: listing.status };
      results.push({ index: winner.index, ...shown, created: outcome === 'created', outcome });
      for (const earlier of passed.slice(0, -1))
        results.push({
          index: earlier.index,
          ...shown,
          created: false,
          outcome: 'superseded',
          supersededBy: winner.index,
        });
    }
    results.sort((a, b) => (a.index as number) - (b.index as number));
    errors.sort((a, b) => a.index - b.index);
    return { state: next as State, results, errors };
  }

  /** The content one body gives the listing, or undefined when the rules refuse it (422). */
  private content(p: PartnerKey, body: Body, current: Listing | undefined) {
    const dealer = body.dealer?.key ?? current?.dealer ?? defaultDealer(this.layout, p);
    if (!dealer) return undefined;
    const status = body.status ?? current?.status ?? 'active';
    if ((status === 'active' || status === 'pending') && body.price === undefined) return undefined;
    return {
      dealer,
      status,
      title: body.title.trim(),
      price: body.price ?? null,
      mileage: body.mileage ?? null,
    };
  }
}

/** Variable bindings of one candidate serialization. */
export class Bindings {
  private readonly values = new Map<Var, string>();
  private readonly ids = new Map<string, Var>();
  /** `taken`: ids of listings that existed before the step; a new listing cannot reuse one. */
  constructor(private readonly taken: ReadonlySet<string>) {}

  resolve(v: V): V {
    return v instanceof Var ? (this.values.get(v) ?? v) : v;
  }

  /** Compares what the model expects with what the service answered; a mismatch as text, or null. */
  unify(expected: unknown, actual: unknown, at = ''): string | null {
    if (expected instanceof Var) {
      const bound = this.values.get(expected);
      if (bound !== undefined)
        return bound === actual ? null : `${at}: expected ${bound} (${expected}), got ${show(actual)}`;
      if (typeof actual !== 'string') return `${at}: expected a value for ${expected}, got ${show(actual)}`;
      if (expected.kind === 'id' && (this.taken.has(actual) || this.ids.has(actual)))
        return `${at}: a new listing got id ${actual}, which another listing already has`;
      if (expected.kind === 'time' && Number.isNaN(Date.parse(actual)))
        return `${at}: not a timestamp: ${actual}`;
      this.values.set(expected, actual);
      if (expected.kind === 'id') this.ids.set(actual, expected);
      return null;
    }
    if (Array.isArray(expected)) {
      if (!Array.isArray(actual) || actual.length !== expected.length)
        return `${at}: expected ${expected.length} entries ${show(expected, this)}, got ${show(actual)}`;
      for (let i = 0; i < expected.length; i++) {
        const wrong = this.unify(expected[i], actual[i], `${at}[${i}]`);
        if (wrong) return wrong;
      }
      return null;
    }
    if (expected !== null && typeof expected === 'object') {
      if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
        return `${at}: expected ${show(expected, this)}, got ${show(actual)}`;
      const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
      for (const k of keys) {
        if (!(k in expected) || !(k in actual))
          return `${at}: expected ${show(expected, this)}, got ${show(actual)}`;
        const wrong = this.unify(
          (expected as Record<string, unknown>)[k],
          (actual as Record<string, unknown>)[k],
          `${at}.${k}`,
        );
        if (wrong) return wrong;
      }
      return null;
    }
    return Object.is(expected, actual) ? null : `${at}: expected ${show(expected)}, got ${show(actual)}`;
  }

  /** The state with every bound variable replaced by its value. */
  settle(state: State): State {
    const out = new Map<string, Listing>();
    for (const [k, l] of state)
      out.set(k, {
        ...l,
        id: this.resolve(l.id),
        createdAt: this.resolve(l.createdAt),
        updatedAt: this.resolve(l.updatedAt),
        soldAt: l.soldAt === null ? null : this.resolve(l.soldAt),
      });
    return out;
  }
}

/** Compact JSON for messages; listings are shown as one line each. */
export function show(value: unknown, bindings?: Bindings): string {
  return (
    JSON.stringify(value, (_k, v) => (v instanceof Var ? String(bindings?.resolve(v) ?? v) : v)) ??
    'undefined'
  );
}

export function describeListing(l: Listing): string {
  const dealer = l.dealer;
  return `${l.owner}/${JSON.stringify(l.ref)} ${String(l.id).slice(0, 8)} ${l.status} ${JSON.stringify(l.title)} price=${l.price} km=${l.mileage} dealer=${dealer}`;
}

/** Every order of 0..n-1 (n is small: a step runs at most four operations at once). */
export function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) =>
    Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]),
  );
}
