import { writeFileSync } from 'node:fs';
import type { ForecourtClient } from '../index.js';
import { CliError } from './errors.js';
import type { Feed } from './feed.js';
import {
  type LocationScope,
  markMissing,
  planMissing,
  refusal,
  unchosenScopeRefusal,
} from './mark-missing.js';
import { errorText } from './messages.js';
import { progressBar } from './progress.js';
import type { Settings } from './settings.js';
import { emptyCounts, type Failure } from './state.js';

/** `--mark-missing-sold` as a step of the import: which stock, the plan, its checks, the marking. */

export interface MarkResult {
  /** Listings marked sold (in a dry run: that would be). */
  count: number;
  failures: Failure[];
}

export async function markMissingSold(
  s: Settings,
  feed: Feed,
  client: ForecourtClient,
  signal: AbortSignal,
): Promise<MarkResult> {
  const say = (text: string) => process.stderr.write(`${text}\n`);
  const unnamed = feed.rows.filter((r) => typeof r.listing?.externalReference !== 'string').length;
  if (unnamed > 0 && !s.force) {
    throw new CliError(
      `--mark-missing-sold: ${unnamed} rows have no externalReference, so the listings they stand for ` +
        'cannot be told from missing ones; fix those rows, or add --force',
    );
  }
  const references = new Set(
    feed.rows
      .map((r) => r.listing?.externalReference)
      .filter((ref): ref is string => typeof ref === 'string'),
  );
  const named = feedLocations(feed);
  const scope: LocationScope =
    s.locations === 'all' || s.locations === undefined
      ? { all: true }
      : {
          all: false,
          locations: s.locations === 'feed' ? named : new Set(s.locations.map((c) => c.toLowerCase())),
        };
  if (s.locations === 'feed' && named.size === 0) {
    throw new CliError(
      '--locations-from-feed: no row names a dealer (dealerLocationCode or dealerProfileId); use --location CODE',
    );
  }
  say(
    `--mark-missing-sold covers ${
      scope.all ? 'your whole stock, at every location' : `the locations ${[...scope.locations].join(', ')}`
    }`,
  );
  let plan: Awaited<ReturnType<typeof planMissing>>;
  try {
    plan = await planMissing(client, references, scope, signal);
  } catch (error) {
    throw new CliError(`--mark-missing-sold: cannot read your listings: ${errorText(error)}`);
  }
  const listFile = `${s.feedPath}.${s.dryRun ? 'would-mark-sold' : 'mark-sold'}.txt`;
  // The whole list, not a sample: a partner checks it before letting a run take cars off the market.
  if (plan.missing.length) writeFileSync(listFile, `${plan.missing.join('\n')}\n`);
  const unchosen = s.locations === undefined ? unchosenScopeRefusal(plan, named) : undefined;
  const refused = unchosen ?? (s.force ? undefined : refusal(plan));
  if (refused) throw new CliError(`${refused} (the ${plan.missing.length} references: ${listFile})`);
  if (plan.missing.length === 0) {
    say('--mark-missing-sold: every unsold listing in that stock is in the feed; nothing to mark');
    return { count: 0, failures: [] };
  }
  if (s.dryRun) {
    say(
      `--mark-missing-sold (dry run): would mark ${plan.missing.length} of ${plan.stock} as sold; the list: ${listFile}`,
    );
    return { count: plan.missing.length, failures: [] };
  }
  say(
    `--mark-missing-sold: marking ${plan.missing.length} of your ${plan.stock} unsold listings as sold (the list: ${listFile})`,
  );
  const bar = progressBar(plan.missing.length);
  try {
    const failures = await markMissing(
      client,
      plan.missing,
      (done) => bar.update(done, { ...emptyCounts(), updated: done }),
      signal,
    );
    bar.finish();
    return { count: plan.missing.length - failures.length, failures };
  } catch (error) {
    bar.finish();
    throw new CliError(
      `--mark-missing-sold stopped: ${errorText(error)}; run the same command again to finish`,
    );
  }
}

/** The dealers the feed's rows name, as lowercase location codes and profile ids. */
function feedLocations(feed: Feed): Set<string> {
  const named = new Set<string>();
  for (const { listing } of feed.rows) {
    for (const key of ['dealerLocationCode', 'dealerProfileId']) {
      const value = listing?.[key];
      if (typeof value === 'string' && value.trim()) named.add(value.trim().toLowerCase());
    }
  }
  return named;
}
