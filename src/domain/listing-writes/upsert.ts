import type { Partner } from '../access.js';
import { ProblemError } from '../errors.js';
import {
  type Invalid,
  type ItemError,
  type ItemResult,
  itemError,
  type Prepared,
  prepare,
  type RawItem,
  refuseInvalid,
} from '../listing-items.js';
import { resolveDealers } from './dealers.js';
import type { ListingWriteDeps } from './deps.js';
import { withWriteRetry } from './retry.js';
import { writeBatch } from './write-batch.js';

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
  options: { dryRun: boolean },
): Promise<{ results: ItemResult[]; errors: ItemError[] }> {
  const errors: ItemError[] = [];
  const prepared: Prepared[] = [];
  const invalid: Invalid[] = [];
  for (const item of items) {
    const result = prepare(deps.schema, item);
    if (result instanceof ProblemError) errors.push(itemError(item.index, item.reference, result));
    else if ('issues' in result) invalid.push(result);
    else prepared.push(result);
  }
  await refuseInvalid(deps.store, partner, invalid, errors);

  // A reference repeated in one request: the last occurrence that succeeds wins (chosen in
  // writeBatch, once the stored listing is known); earlier successful ones are reported as
  // superseded, failing ones as errors. Every item ends up in exactly one of the two lists.
  const dealerOf = await resolveDealers(deps, partner, prepared, errors);
  const candidates = prepared.filter((p) => dealerOf.has(p.index));

  let outcome: { written: Map<string, ItemResult>; local: ItemError[] };
  try {
    outcome = await withWriteRetry(() =>
      deps.db.transaction(
        async (tx) => {
          const local: ItemError[] = [];
          const written = await writeBatch(deps, partner, candidates, dealerOf, local, tx);
          // A dry run does all the work, then rolls it back; its answer travels out inside the error.
          if (options.dryRun) throw new DryRun({ written, local });
          return { written, local };
        },
        { maxMs: deps.writeTimeoutMs },
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
  return { results, errors };
}

class DryRun extends Error {
  constructor(readonly outcome: { written: Map<string, ItemResult>; local: ItemError[] }) {
    super('dry run');
  }
}
