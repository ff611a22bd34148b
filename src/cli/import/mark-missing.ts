import { type ForecourtClient, ForecourtError } from '../../client/index.js';
import type { Failure } from './state.js';

/** The most a full-stock feed may take off the market without --force (issue 6: an empty feed must not wipe a stock). */
export const MAX_MISSING_SHARE = 0.2;

export interface MissingPlan {
  /** This partner's listings that are not sold (the stock a feed describes). */
  stock: number;
  /** References of those that the feed does not name: they would be marked sold. */
  missing: string[];
}

/**
 * Reads every listing of this partner (`mine=true`, all statuses) by cursor and keeps the unsold
 * ones that the feed does not name. Sold listings are left out of both counts: marking them again
 * does nothing, and a stock is what is for sale.
 */
export async function planMissing(
  client: ForecourtClient,
  feedReferences: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<MissingPlan> {
  let stock = 0;
  const missing: string[] = [];
  const listings = client.listings.iterate(
    { mine: true, status: 'all', pageSize: 200 },
    signal ? { signal } : {},
  );
  for await (const listing of listings) {
    if (listing.status === 'sold') continue;
    stock++;
    if (!feedReferences.has(listing.externalReference)) missing.push(listing.externalReference);
  }
  return { stock, missing };
}

/** Why a plan may not run without --force, or undefined when it may. */
export function refusal(plan: MissingPlan): string | undefined {
  if (plan.missing.length === 0 || plan.missing.length <= plan.stock * MAX_MISSING_SHARE) return undefined;
  const share = Math.round((plan.missing.length / plan.stock) * 100);
  return (
    `--mark-missing-sold would mark ${plan.missing.length} of your ${plan.stock} unsold listings ` +
    `(${share}%) as sold, more than ${MAX_MISSING_SHARE * 100}%. If the feed really is your whole ` +
    'stock, run again with --force; if it is partial or truncated, leave out --mark-missing-sold.'
  );
}

/**
 * Marks each missing listing sold (DELETE /listings/{ref}, idempotent), one after another: the API
 * has no bulk status change, and the client paces these requests to the rate limit. A listing
 * that fails is reported and the others go on.
 */
export async function markMissing(
  client: ForecourtClient,
  references: readonly string[],
  onEach: (done: number) => void,
  signal?: AbortSignal,
): Promise<Failure[]> {
  const failures: Failure[] = [];
  for (const [i, reference] of references.entries()) {
    try {
      await client.listings.markSold(reference, signal ? { signal } : {});
    } catch (error) {
      // A rejection for this one listing; anything else (auth, network after retries, abort) stops the run.
      const perListing =
        error instanceof ForecourtError &&
        [403, 404, 409, 422].includes(error.status) &&
        error.code !== 'INSUFFICIENT_SCOPE';
      if (!perListing) throw error;
      failures.push({ row: 0, reference, code: error.code, message: error.message });
    }
    onEach(i + 1);
  }
  return failures;
}
