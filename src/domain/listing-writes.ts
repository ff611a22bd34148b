import { randomUUID } from 'node:crypto';
import type { Services } from '../services.js';
import type { Queryable } from '../store/db.js';
import { DbError } from '../store/errors.js';
import type { ExistingListing, ListingRow, WrittenListing } from '../store/listings-write.js';
import { inScope, type Partner } from './access.js';
import { ProblemError } from './errors.js';
import { crossFieldIssues, priceIssue, resultingStatus } from './listing-checks.js';
import type { Status } from './listing-input.js';
import {
  defaultDealerOf,
  type Invalid,
  type ItemError,
  type ItemResult,
  itemError,
  type Outcome,
  type Prepared,
  prepare,
  type RawItem,
  refuseInvalid,
  validationFailed,
} from './listing-items.js';
import { makeSlug } from './slug.js';

export type { ItemError, ItemResult, Outcome, RawItem } from './listing-items.js';

/**
 * Creates or replaces listings by the partner's references: the heart of PUT and bulk upsert.
 * Each item succeeds or fails on its own; all valid items are written in a handful of set-based
 * statements inside one transaction. With `dryRun` the same work runs and is rolled back, so the
 * answer is exactly what a real write would have said.
 */
export async function upsertListings(
  services: Services,
  partner: Partner,
  items: readonly RawItem[],
  options: { dryRun: boolean },
): Promise<{ results: ItemResult[]; errors: ItemError[] }> {
  const errors: ItemError[] = [];
  const prepared: Prepared[] = [];
  const invalid: Invalid[] = [];
  for (const item of items) {
    const result = prepare(services, item);
    if (result instanceof ProblemError) errors.push(itemError(item.index, item.reference, result));
    else if ('issues' in result) invalid.push(result);
    else prepared.push(result);
  }
  await refuseInvalid(services, partner, invalid, errors);

  // A reference repeated in one request: the last occurrence that succeeds wins (chosen in
  // writeLocked, once the stored listing is known); earlier successful ones are reported as
  // superseded, failing ones as errors. Every item ends up in exactly one of the two lists.
  const dealerOf = await resolveDealers(services, partner, prepared, errors);
  const candidates = prepared.filter((p) => dealerOf.has(p.index));

  let outcome: { written: Map<string, ItemResult>; local: ItemError[] };
  try {
    outcome = await withWriteRetry(() =>
      services.db.transaction(async (tx) => {
        const local: ItemError[] = [];
        const written = await writeLocked(services, partner, candidates, dealerOf, local, tx);
        // A dry run does all the work, then rolls it back; its answer travels out inside the error.
        if (options.dryRun) throw new DryRun({ written, local });
        return { written, local };
      }, writeBounds(services)),
    );
    // A walk that starts after this answer must not be judged by a horizon read before it.
    services.syncHorizon.forget();
  } catch (error) {
    if (!(error instanceof DryRun)) throw error;
    outcome = error.outcome;
  }
  errors.push(...outcome.local);

  const failed = new Set(outcome.local.map((e) => e.index));
  const results: ItemResult[] = [];
  for (const p of candidates) {
    const winner = outcome.written.get(p.reference);
    if (!winner || failed.has(p.index)) continue;
    if (winner.index === p.index) results.push(winner);
    else
      results.push({
        ...winner,
        index: p.index,
        created: false,
        outcome: 'superseded',
        supersededBy: winner.index,
      });
  }
  results.sort((a, b) => a.index - b.index);
  errors.sort((a, b) => a.index - b.index);
  return { results, errors };
}

class DryRun extends Error {
  constructor(readonly outcome: { written: Map<string, ItemResult>; local: ItemError[] }) {
    super('dry run');
  }
}

/**
 * Resolves the dealer each item names (dealerProfileId, else dealerLocationCode) in two queries
 * for the whole batch. Unknown and out-of-scope dealers are refused alike with PROFILE_FORBIDDEN.
 * Items naming no dealer are resolved later, once we know whether the listing exists.
 */
async function resolveDealers(
  services: Services,
  partner: Partner,
  items: Prepared[],
  errors: ItemError[],
): Promise<Map<number, string>> {
  const ids = [
    ...new Set(items.flatMap((p) => (p.write.dealer && 'id' in p.write.dealer ? [p.write.dealer.id] : []))),
  ];
  const codes = [
    ...new Set(
      items.flatMap((p) => (p.write.dealer && 'code' in p.write.dealer ? [p.write.dealer.code] : [])),
    ),
  ];
  const [known, byCode] = await Promise.all([
    services.dealers.existing(ids),
    services.dealers.idsByCodes(codes),
  ]);
  const resolved = new Map<number, string>();
  for (const p of items) {
    const dealer = p.write.dealer;
    if (!dealer) {
      resolved.set(p.index, '');
      continue;
    }
    const id =
      'id' in dealer ? (known.has(dealer.id) ? dealer.id : undefined) : byCode.get(dealer.code.toLowerCase());
    if (id && inScope(partner.access, id)) {
      resolved.set(p.index, id);
    } else {
      const what = 'id' in dealer ? `Dealer profile ${dealer.id}` : `Location code "${dealer.code}"`;
      errors.push(
        itemError(
          p.index,
          p.reference,
          new ProblemError(403, 'PROFILE_FORBIDDEN', `${what} is not in this API secret's access scope.`),
        ),
      );
    }
  }
  return resolved;
}

async function writeLocked(
  services: Services,
  partner: Partner,
  batch: Prepared[],
  dealers: Map<number, string>,
  errors: ItemError[],
  tx: Queryable,
): Promise<Map<string, ItemResult>> {
  const existing = new Map(
    (
      await services.listingWrites.lockExisting(
        partner.id,
        batch.map((p) => p.reference),
        tx,
      )
    ).map((e) => [e.reference, e]),
  );
  const defaultDealer = defaultDealerOf(partner);
  // Items in request order: a later successful occurrence of a reference replaces an earlier one.
  const winners = new Map<string, { p: Prepared; checked: { dealerProfileId: string; status: Status } }>();
  for (const p of batch) {
    const current = existing.get(p.reference);
    const checked = checkItem(partner, p, current, dealers.get(p.index) || undefined, defaultDealer);
    if (checked instanceof ProblemError) errors.push(itemError(p.index, p.reference, checked));
    else winners.set(p.reference, { p, checked });
  }
  const rows: ListingRow[] = [];
  for (const { p, checked } of winners.values()) {
    rows.push({
      id: existing.get(p.reference)?.id ?? randomUUID(),
      reference: p.reference,
      slug: makeSlug([
        p.write.values.brand,
        p.write.values.model,
        p.write.values.variant,
        p.write.values.year,
      ]),
      dealerProfileId: checked.dealerProfileId,
      status: checked.status,
      statusGiven: p.write.status !== undefined,
      dealerGiven: p.write.dealer !== undefined,
      values: p.write.values,
    });
  }

  const fresh = rows.filter((r) => !existing.has(r.reference));
  const inserted = await services.listingWrites.insertNew(partner.id, fresh, tx);
  const insertedRefs = new Set(inserted.map((r) => r.reference));
  // A reference another transaction created after our first look was skipped by the insert.
  // Fix (model tests): every check above (dealer required, price required, which occurrence of a
  // repeated reference wins) was made against "no listing", so answering from them mixed two
  // states (e.g. "dealer required" for one item while another updated the listing). Start over:
  // the retry sees that listing, locked like any known one.
  if (inserted.length < fresh.length) throw new Raced();
  const updated = await services.listingWrites.updateChanged(
    partner.id,
    rows.filter((r) => !insertedRefs.has(r.reference)),
    tx,
  );
  const moved = updated.filter((u) => {
    const before = existing.get(u.reference);
    return !before || before.status !== u.status || before.dealerProfileId !== u.dealerProfileId;
  });
  await services.listingWrites.recordHistory([...inserted, ...moved], tx);

  const results = new Map<string, ItemResult>();
  const add = (row: Pick<WrittenListing, 'id' | 'reference' | 'status'>, outcome: Outcome) =>
    results.set(row.reference, {
      index: winners.get(row.reference)!.p.index,
      externalReference: row.reference,
      listingId: row.id,
      status: row.status,
      created: outcome === 'created',
      outcome,
    });
  for (const row of inserted) add(row, 'created');
  for (const row of updated) add(row, 'updated');
  for (const row of rows) {
    if (results.has(row.reference)) continue;
    const before = existing.get(row.reference);
    // Neither inserted nor changed: the stored listing already had exactly this content.
    add(
      { id: before?.id ?? row.id, reference: row.reference, status: before?.status ?? row.status },
      'unchanged',
    );
  }
  return results;
}

/** Per-item rules that need the stored listing: dealer choice, scope of the current dealer, price. */
function checkItem(
  partner: Partner,
  item: Prepared,
  current: ExistingListing | undefined,
  namedDealer: string | undefined,
  defaultDealer: string | undefined,
): ProblemError | { dealerProfileId: string; status: Status } {
  if (current && !inScope(partner.access, current.dealerProfileId)) {
    return new ProblemError(
      403,
      'PROFILE_FORBIDDEN',
      `Listing "${item.reference}" belongs to dealer profile ${current.dealerProfileId}, which is no longer in this API secret's access scope.`,
    );
  }
  const issues = crossFieldIssues(
    {
      status: item.write.status,
      namesDealer: namedDealer !== undefined,
      hasPrice: item.write.values.price !== null,
    },
    current,
    defaultDealer,
  );
  if (issues.length) return validationFailed(issues);
  const dealerProfileId = (namedDealer ?? current?.dealerProfileId ?? defaultDealer)!;
  return { dealerProfileId, status: resultingStatus(item.write.status, current) };
}

/** A listing on offer (active or pending) has a price: decisions.md. */
const priceRequired = (status: Status) => validationFailed([priceIssue(status)]);

/** Listing writes are bounded in time: sync cursors trust that nothing commits later (docs/sync.md). */
const writeBounds = (services: Services) => ({ maxMs: services.config.WRITE_TX_TIMEOUT_MS });

/** A reference of the batch was created by another transaction after we looked it up. */
class Raced extends Error {
  constructor() {
    super('a reference of the batch was created concurrently');
  }
}

/**
 * Two writers locking overlapping rows can still deadlock in rare orders; PostgreSQL picks a victim, we retry it.
 * A batch that raced another writer's creation is retried too: each retry knows at least one more
 * of its references (listings are never removed), so this ends within the batch's size (at most
 * 100 items, the bulk limit).
 */
async function withWriteRetry<T>(fn: () => Promise<T>): Promise<T> {
  let deadlocks = 0;
  let races = 0;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof Raced) {
        if (++races <= 100) continue;
        // Unreachable by the argument above; should it happen, the client may simply retry.
        throw new ProblemError(
          503,
          'SERVICE_UNAVAILABLE',
          'A conflicting write was in progress; retry shortly.',
        );
      }
      const retryable =
        error instanceof DbError && (error.sqlState === '40P01' || error.sqlState === '40001');
      if (!retryable || ++deadlocks >= 3) throw error;
    }
  }
}

/** POST /listings/{ref}/status and DELETE (status sold): one listing of this partner, by reference. */
export async function changeStatus(
  services: Services,
  partner: Partner,
  reference: string,
  status: Status,
): Promise<{ listingId: string; externalReference: string; status: string }> {
  const result = await withWriteRetry(() =>
    services.db.transaction(async (tx) => {
      const [current] = await services.listingWrites.lockExisting(partner.id, [reference], tx);
      if (!current)
        throw new ProblemError(
          404,
          'NOT_FOUND',
          `This partner has no listing with externalReference "${reference}".`,
        );
      if (!inScope(partner.access, current.dealerProfileId)) {
        throw new ProblemError(
          403,
          'PROFILE_FORBIDDEN',
          `Listing "${reference}" belongs to dealer profile ${current.dealerProfileId}, which is not in this API secret's access scope.`,
        );
      }
      const changed = await services.listingWrites
        .setStatus(partner.id, reference, status, tx)
        .catch((error: unknown) => {
          // Fix (model tests): a listing without a price moved to active or pending broke the
          // table's check and answered 500; the rule is a validation failure like on PUT.
          if (error instanceof DbError && error.constraint === 'listings_price_when_listed')
            throw priceRequired(status);
          throw error;
        });
      if (changed) await services.listingWrites.recordHistory([changed], tx);
      return { listingId: current.id, externalReference: reference, status };
    }, writeBounds(services)),
  );
  services.syncHorizon.forget();
  return result;
}
