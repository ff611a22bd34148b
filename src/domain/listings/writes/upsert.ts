import { ownerOf } from '../../../store/listings/mode.js';
import type { ExistingListing } from '../../../store/listings/writes.js';
import type { Partner } from '../../access.js';
import { ProblemError } from '../../errors.js';
import { ifMatchHolds, preconditionFailed } from '../../etag.js';
import {
  dryRunOutcome,
  type Invalid,
  type ItemError,
  type ItemResult,
  itemError,
  type Prepared,
  prepare,
  type RawItem,
  refuseInvalid,
} from '../items.js';
import { resolveDealers } from './dealers.js';
import type { ListingWriteDeps } from './deps.js';
import { withWriteRetry } from './retry.js';
import { addScopeIssues } from './scope-issues.js';
import { readVersion, type Version } from './version.js';
import { writeBatch } from './write-batch.js';

export interface UpsertOptions {
  dryRun: boolean;
  /**
   * One item only (PUT): the If-Match header, checked against the stored listing inside the write's
   * transaction, under its lock; and the listing's new ETag, returned by the write's statement.
   */
  single?: { ifMatch?: string | undefined };
}

/**
 * Creates or replaces listings by the partner's references: the heart of PUT and bulk upsert.
 * Each item succeeds or fails on its own; all valid items are written in a handful of set-based
 * statements inside one transaction. With `dryRun` the same work runs and is rolled back, so the
 * answer is exactly what a real write would have said.
 */
export async function upsertListings(
  deps: ListingWriteDeps,
  partner: Partner,
  items: readonly RawItem[],
  options: UpsertOptions,
): Promise<{ results: ItemResult[]; errors: ItemError[]; etag?: string }> {
  const errors: ItemError[] = [];
  const prepared: Prepared[] = [];
  const invalid: Invalid[] = [];
  for (const item of items) {
    const result = prepare(deps.schema, item);
    if (result instanceof ProblemError) errors.push(itemError(item.index, item.reference, result));
    else if ('issues' in result) invalid.push(result);
    else prepared.push(result);
  }
  await addScopeIssues(deps, partner, invalid);
  await refuseInvalid(deps.store, partner, invalid, errors);

  // A reference repeated in one request: the last occurrence that succeeds wins (chosen in
  // writeBatch, once the stored listing is known); earlier successful ones are reported as
  // superseded, failing ones as errors. Every item ends up in exactly one of the two lists.
  const dealerOf = await resolveDealers(deps, partner, prepared, errors);
  const candidates = prepared.filter((p) => dealerOf.has(p.index));

  let outcome: Outcome;
  try {
    outcome = await withWriteRetry(() =>
      deps.db.transaction(
        async (tx) => {
          const local: ItemError[] = [];
          const single = options.single && candidates.length === 1 ? candidates[0]!.reference : undefined;
          const ifMatch = options.single?.ifMatch;
          let before: Version | undefined;
          let locked: ExistingListing[] | undefined;
          if (single !== undefined && (ifMatch !== undefined || options.dryRun)) {
            // Locked first, so the version compared is the version replaced.
            locked = await deps.store.lockExisting(ownerOf(partner), [single], tx);
            before = await readVersion(deps, ownerOf(partner), single, tx);
            if (!ifMatchHolds(ifMatch, before?.etag)) throw preconditionFailed(single, before?.etag);
          }
          // A single write's new ETag comes with it: the statement that writes the listing (or
          // finds it unchanged) returns its JSON as GET shows it, under the same lock.
          const { results: written, versions } = await writeBatch(
            deps,
            partner,
            candidates,
            dealerOf,
            local,
            tx,
            { locked, versions: single !== undefined && !options.dryRun },
          );
          // A dry run writes nothing: its answer carries the version that stays (none for a new
          // reference), never one that was rolled back and cannot be matched.
          const etag =
            single === undefined || local.length > 0
              ? undefined
              : options.dryRun
                ? before?.etag
                : versions.get(single)?.etag;
          // A dry run does all the work, then rolls it back; its answer travels out inside the error.
          if (options.dryRun) throw new DryRun({ written, local, etag });
          return { written, local, etag };
        },
        // Plans made once: a write's statements are large, and their plans do not depend on the values.
        { maxMs: deps.writeTimeoutMs, genericPlans: true },
      ),
    );
    // A walk that starts after this answer must not be judged by a horizon read before it.
    deps.syncHorizon.forget();
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
  if (options.dryRun) {
    // What would happen, nothing having happened: no id for a listing that does not exist (the one
    // the rolled-back write made is no one's), nothing created.
    const wouldCreate = new Set(
      results.filter((r) => r.outcome === 'created').map((r) => r.externalReference),
    );
    for (const [i, r] of results.entries()) {
      results[i] = {
        ...r,
        listingId: wouldCreate.has(r.externalReference) ? null : r.listingId,
        created: false,
        outcome: dryRunOutcome(r.outcome),
        dryRun: true,
      };
    }
  }
  return { results, errors, ...(outcome.etag !== undefined ? { etag: outcome.etag } : {}) };
}

type Outcome = { written: Map<string, ItemResult>; local: ItemError[]; etag?: string | undefined };

class DryRun extends Error {
  constructor(readonly outcome: Outcome) {
    super('dry run');
  }
}
