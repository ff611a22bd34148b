import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../../store/db.js';
import { ownerOf } from '../../../store/listings/mode.js';
import type { ExistingListing, ListingRow, WrittenListing } from '../../../store/listings/writes.js';
import { inScope, type Partner } from '../../access.js';
import { ProblemError, problem } from '../../errors.js';
import { messages } from '../../messages.js';
import { makeSlug } from '../../slug.js';
import { assertTestRoom } from '../../test-data.js';
import { crossFieldIssues, resultingStatus } from '../checks.js';
import type { Status } from '../input.js';
import {
  defaultDealerOf,
  type ItemError,
  type ItemResult,
  itemError,
  type Outcome,
  type Prepared,
  validationFailed,
} from '../items.js';
import type { ListingWriteDeps } from './deps.js';
import { recordReadinessChanges } from './readiness-events.js';
import { Raced } from './retry.js';
import { type Version, versionOf } from './version.js';

type Checked = { dealerProfileId: string; status: Status };
type Winner = { p: Prepared; checked: Checked };

/** What writeBatch may be told beyond its batch. */
export interface BatchOptions {
  /** The batch's listings as the caller locked them in this transaction (lockExisting): not locked again. */
  locked?: ExistingListing[] | undefined;
  /** Answer each written or unchanged listing's version (its JSON as GET shows it, its ETag) too. */
  versions?: boolean;
}

/**
 * Writes one batch inside the caller's transaction, in a handful of set-based statements: lock
 * the stored listings, check each item against them, insert the new ones and update the changed
 * ones, each statement recording the status history of its rows. Items that fail a check land in
 * `errors`; the answer is the result for each reference that was written (or found unchanged),
 * and with `versions` each one's version, read by the statement that wrote it.
 */
export async function writeBatch(
  deps: Pick<ListingWriteDeps, 'store' | 'view' | 'testData'>,
  partner: Partner,
  batch: Prepared[],
  dealers: Map<number, string>,
  errors: ItemError[],
  tx: Queryable,
  options: BatchOptions = {},
): Promise<{ results: Map<string, ItemResult>; versions: Map<string, Version> }> {
  const locked =
    options.locked ??
    (await deps.store.lockExisting(
      ownerOf(partner),
      batch.map((p) => p.reference),
      tx,
    ));
  const existing = new Map(locked.map((e) => [e.reference, e]));
  const refusedBefore = errors.length;
  const winners = pickWinners(partner, batch, existing, dealers, errors);
  // The locking statement matched the rows of its snapshot, taken before it waited for another
  // writer's locks: a listing that writer created is not among them. An insert of such a
  // reference is caught below; an item refused by a check made against "no listing" (dealer
  // required, say) is not, and its answer would mix two states (found by the model tests on
  // PostgreSQL: a batch refused "k 3/é" for want of a dealer while it overwrote "k2" after the
  // batch that created "k 3/é"). A new statement sees what committed: if one of them exists now,
  // start over, locked like any known one.
  const refusedAbsent = errors
    .slice(refusedBefore)
    .map((e) => e.externalReference)
    .filter((ref): ref is string => typeof ref === 'string' && !existing.has(ref));
  if (refusedAbsent.length && (await deps.store.findExisting(ownerOf(partner), refusedAbsent, tx)).length) {
    throw new Raced();
  }
  const rows = [...winners.values()].map(({ p, checked }) => toRow(p, checked, existing.get(p.reference)));
  const version = options.versions ? deps.view : undefined;

  const fresh = rows.filter((r) => !existing.has(r.reference));
  if (partner.test && fresh.length) await assertTestRoom(deps.testData, partner.id, fresh.length, tx);
  const inserted = await deps.store.insertNew(ownerOf(partner), fresh, tx, { version });
  // A reference another transaction created after our first look was skipped by the insert.
  // Fix (model tests): every check above (dealer required, price required, which occurrence of a
  // repeated reference wins) was made against "no listing", so answering from them mixed two
  // states (e.g. "dealer required" for one item while another updated the listing). Start over:
  // the retry sees that listing, locked like any known one.
  if (inserted.length < fresh.length) throw new Raced();
  const insertedRefs = new Set(inserted.map((r) => r.reference));
  const answered = await deps.store.updateChanged(
    ownerOf(partner),
    rows.filter((r) => !insertedRefs.has(r.reference)),
    tx,
    { version },
  );
  const updated = answered.filter((r) => r.changed);
  // An existing listing whose readiness the update changed: its event, under the same locks.
  await recordReadinessChanges(
    tx,
    updated.map((r) => ({ listingId: r.id, from: existing.get(r.reference)?.readiness, to: r.readiness })),
  );
  const versions = new Map<string, Version>();
  for (const row of [...inserted, ...answered])
    if (row.version) versions.set(row.reference, versionOf(row.version));
  return {
    results: outcomes(rows, winners, existing, inserted, updated),
    versions,
  };
}

/** Items in request order: a later successful occurrence of a reference replaces an earlier one. */
function pickWinners(
  partner: Partner,
  batch: Prepared[],
  existing: Map<string, ExistingListing>,
  dealers: Map<number, string>,
  errors: ItemError[],
): Map<string, Winner> {
  const defaultDealer = defaultDealerOf(partner);
  const winners = new Map<string, Winner>();
  for (const p of batch) {
    const current = existing.get(p.reference);
    const checked = checkItem(partner, p, current, dealers.get(p.index) || undefined, defaultDealer);
    if (checked instanceof ProblemError) errors.push(itemError(p.index, p.reference, checked));
    else winners.set(p.reference, { p, checked });
  }
  return winners;
}

function toRow(p: Prepared, checked: Checked, current: ExistingListing | undefined): ListingRow {
  const { values } = p.write;
  return {
    id: current?.id ?? randomUUID(),
    reference: p.reference,
    slug: makeSlug([values.brand, values.model, values.variant, values.year]),
    dealerProfileId: checked.dealerProfileId,
    status: checked.status,
    statusGiven: p.write.status !== undefined,
    dealerGiven: p.write.dealer !== undefined,
    values,
    previous: current && { status: current.status, dealerProfileId: current.dealerProfileId },
  };
}

/** Each written reference's result: created, updated, or unchanged (stored content already equal). */
function outcomes(
  rows: ListingRow[],
  winners: Map<string, Winner>,
  existing: Map<string, ExistingListing>,
  inserted: WrittenListing[],
  updated: WrittenListing[],
): Map<string, ItemResult> {
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
): ProblemError | Checked {
  if (current && !inScope(partner.access, current.dealerProfileId)) {
    return problem(
      'PROFILE_FORBIDDEN',
      messages.listingDealerNotInScope(item.reference, current.dealerProfileId),
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
