import { type ForecourtClient, ForecourtError } from '../index.js';
import type { Failure } from './state.js';

/** The most a full-stock feed may take off the market without --force (issue 6: an empty feed must not wipe a stock). */
export const MAX_MISSING_SHARE = 0.2;

export interface MissingPlan {
  /** This partner's listings that are not sold (the stock a feed describes), in the scope. */
  stock: number;
  /** References of those that the feed does not name: they would be marked sold. */
  missing: string[];
  /** Where each missing listing is: its location code and profile id (lowercase). */
  missingAt: { code: string; id: string }[];
  /** Location codes of unsold listings outside the scope (left alone), for the message. */
  outside: Set<string>;
}

/**
 * Which listings a feed stands for: every location of the partner's stock, or only some. A
 * location is matched by its code (case-insensitive) or its profile id.
 */
export type LocationScope = { all: true } | { all: false; locations: Set<string> };

const inScope = (
  scope: LocationScope,
  listing: { dealerProfileId: string; dealer?: { locationCode?: string } },
) =>
  scope.all ||
  scope.locations.has(listing.dealerProfileId.toLowerCase()) ||
  scope.locations.has(listing.dealer?.locationCode?.toLowerCase() ?? '');

/**
 * Reads every listing of this partner (`mine=true`, all statuses) by cursor and keeps the unsold
 * ones that the feed does not name. Sold listings are left out of both counts: marking them again
 * does nothing, and a stock is what is for sale.
 */
export async function planMissing(
  client: ForecourtClient,
  feedReferences: ReadonlySet<string>,
  scope: LocationScope,
  signal?: AbortSignal,
): Promise<MissingPlan> {
  let stock = 0;
  const missing: string[] = [];
  const missingAt: { code: string; id: string }[] = [];
  const outside = new Set<string>();
  const listings = client.listings.iterate(
    { mine: true, status: 'all', pageSize: 200 },
    signal ? { signal } : {},
  );
  for await (const listing of listings) {
    if (listing.status === 'sold') continue;
    if (!inScope(scope, listing)) {
      outside.add(listing.dealer?.locationCode ?? listing.dealerProfileId);
      continue;
    }
    stock++;
    if (!feedReferences.has(listing.externalReference)) {
      missing.push(listing.externalReference);
      missingAt.push({
        code: listing.dealer?.locationCode?.toLowerCase() ?? '',
        id: listing.dealerProfileId.toLowerCase(),
      });
    }
  }
  return { stock, missing, missingAt, outside };
}

/**
 * Without a choice of locations, a feed that names dealers is taken for the whole stock only when
 * every listing it would mark sold is at a location the feed names: a one-location feed must not
 * take the other locations' cars off the market by surprise. Returns why not, or undefined.
 */
export function unchosenScopeRefusal(
  plan: MissingPlan,
  feedLocations: ReadonlySet<string>,
): string | undefined {
  const elsewhere = new Set(
    plan.missingAt
      .filter((at) => !feedLocations.has(at.code) && !feedLocations.has(at.id))
      .map((at) => at.code || at.id),
  );
  if (feedLocations.size === 0 || elsewhere.size === 0) return undefined;
  const count = plan.missingAt.filter((at) => elsewhere.has(at.code || at.id)).length;
  const names = [...elsewhere].slice(0, 5).join(', ') + (elsewhere.size > 5 ? ', …' : '');
  return (
    `--mark-missing-sold: ${count} of the listings it would mark sold are at locations this feed does not name (${names}). ` +
    'Say which stock the feed is: --locations-from-feed (only the locations it names), --location CODE (repeatable), ' +
    'or --all-locations (it is your stock at every location).'
  );
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
