import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  type BatchReport,
  createClient,
  type ForecourtClient,
  ForecourtError,
  type ItemResult,
  type ListingInput,
  type WaitInfo,
} from '../../client/index.js';
import { CliError, UsageError } from '../output.js';
import { type Feed, readFeed } from './feed.js';
import {
  type LocationScope,
  markMissing,
  planMissing,
  refusal,
  unchosenScopeRefusal,
} from './mark-missing.js';
import { type Progress, progressBar } from './progress.js';
import { writeReport } from './report.js';
import {
  type Counts,
  clearState,
  emptyCounts,
  type Failure,
  type ImportState,
  loadState,
  partnerKey,
  saveState,
} from './state.js';
import { applyValueMap, readValueMap } from './value-map.js';

export const IMPORT_USAGE = `Usage: forecourt import <feed.csv|feed.json> --url URL --secret SECRET [options]

Uploads a feed of listings to the Forecourt partner API in batches of 100 (docs/import.md).

  --url URL             the service, e.g. https://api.example.com   (or FORECOURT_URL)
  --secret SECRET       an API secret with write:listings          (or FORECOURT_SECRET)
  --ca FILE             a PEM certificate to trust (self-signed)   (or FORECOURT_CA)
  --dry-run             validate every listing on the service, write nothing
  --mark-missing-sold   the feed is your whole stock: your unsold listings missing from it
                        are marked sold (refused above 20% of them without --force)
  --force               with --mark-missing-sold: go ahead above 20%
  --location CODE       with --mark-missing-sold: the feed is the stock of this location only
                        (repeatable); your listings elsewhere are left alone
  --locations-from-feed with --mark-missing-sold: the feed is the stock of the locations it names
  --all-locations       with --mark-missing-sold: the feed is your stock at every location
                        (without one of these three, a feed naming only some of your locations
                        is refused when it would mark listings elsewhere sold)
  --map FILE            a JSON map of your feed's values to ours, per field, applied before
                        sending, e.g. {"fuelType": {"Stoom": "other", "BZ": "petrol"}}
  --report FILE         the CSV of failed listings (default <feed>.import-report.csv)
  --batch-size N        listings per request, 1 to 100 (default 100)
  --delimiter C         CSV delimiter: ';' ',' '|' or 'tab' (default: detected from the header)
  --encoding E          CSV encoding: utf-8 or iso-8859-15 (default: detected)
  --restart             ignore the saved progress and send the whole feed again
  -h, --help            this text

A run that stops (Ctrl-C, network, service down) keeps its progress in <feed>.import-state.json;
the same command again resumes after the last batch the service answered.

Exit codes: 0 every listing accepted; 1 some listings failed (see the report); 2 the run could not
start or stopped before the end (bad options or feed, authentication, network, --mark-missing-sold
refused); 130 interrupted.
`;

const OPTIONS = {
  url: { type: 'string' },
  secret: { type: 'string' },
  ca: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  'mark-missing-sold': { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  location: { type: 'string', multiple: true },
  'locations-from-feed': { type: 'boolean', default: false },
  'all-locations': { type: 'boolean', default: false },
  map: { type: 'string' },
  report: { type: 'string' },
  'batch-size': { type: 'string', default: '100' },
  delimiter: { type: 'string' },
  encoding: { type: 'string' },
  restart: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

interface Settings {
  feedPath: string;
  url: string;
  secret: string;
  ca: string | undefined;
  dryRun: boolean;
  markMissingSold: boolean;
  force: boolean;
  /** Which locations --mark-missing-sold covers: chosen codes, 'feed', 'all', or not chosen. */
  locations: string[] | 'feed' | 'all' | undefined;
  mapPath: string | undefined;
  reportPath: string;
  statePath: string;
  batchSize: number;
  delimiter: string | undefined;
  encoding: 'utf-8' | 'iso-8859-15' | undefined;
  restart: boolean;
}

function settings(argv: string[], env: Record<string, string | undefined>): Settings | 'help' {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length ? `unexpected argument "${positionals[1]}"` : 'missing the feed file',
    );
  }
  const url = values.url ?? env.FORECOURT_URL;
  const secret = values.secret ?? env.FORECOURT_SECRET;
  if (!url) throw new UsageError('missing --url (or FORECOURT_URL)');
  if (!secret) throw new UsageError('missing --secret (or FORECOURT_SECRET)');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url "${url}" is not a URL (e.g. https://api.example.com)`);
  }
  const batchSize = Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100) {
    throw new UsageError(`--batch-size must be a whole number from 1 to 100, got "${values['batch-size']}"`);
  }
  const delimiter = values.delimiter === 'tab' ? '\t' : values.delimiter;
  if (delimiter !== undefined && ![';', ',', '\t', '|'].includes(delimiter)) {
    throw new UsageError(`--delimiter must be ';', ',', '|' or 'tab', got "${values.delimiter}"`);
  }
  const encoding = values.encoding?.toLowerCase().replace(/^latin-?9$/, 'iso-8859-15');
  if (encoding !== undefined && encoding !== 'utf-8' && encoding !== 'iso-8859-15') {
    throw new UsageError(`--encoding must be utf-8 or iso-8859-15, got "${values.encoding}"`);
  }
  for (const option of ['force', 'location', 'locations-from-feed', 'all-locations'] as const) {
    const given = Array.isArray(values[option]) ? values[option].length > 0 : values[option] === true;
    if (given && !values['mark-missing-sold']) {
      throw new UsageError(`--${option} only applies to --mark-missing-sold`);
    }
  }
  const choices = [values.location?.length, values['locations-from-feed'], values['all-locations']].filter(
    Boolean,
  );
  if (choices.length > 1) {
    throw new UsageError('choose one of --location, --locations-from-feed and --all-locations');
  }
  const feedPath = positionals[0]!;
  return {
    feedPath,
    url,
    secret,
    ca: values.ca ?? env.FORECOURT_CA,
    dryRun: values['dry-run'],
    markMissingSold: values['mark-missing-sold'],
    force: values.force,
    locations: values.location?.length
      ? values.location
      : values['locations-from-feed']
        ? 'feed'
        : values['all-locations']
          ? 'all'
          : undefined,
    mapPath: values.map,
    reportPath: values.report ?? `${feedPath}.import-report.csv`,
    statePath: `${feedPath}.import-state.json`,
    batchSize,
    delimiter,
    encoding,
    restart: values.restart,
  };
}

/** `forecourt import`: returns the exit code. */
export async function runImport(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  let s: Settings | 'help';
  try {
    s = settings(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`forecourt import: ${error.message}\n\n${IMPORT_USAGE}`);
    return 2;
  }
  if (s === 'help') {
    process.stdout.write(IMPORT_USAGE);
    return 0;
  }

  const controller = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(
      '\nforecourt import: stopping after the request in flight (Ctrl-C again to quit now)\n',
    );
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await run(s, controller.signal);
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`forecourt import: ${error.message}\n`);
      return interrupted ? 130 : 2;
    }
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function run(s: Settings, signal: AbortSignal): Promise<number> {
  const feed = readFeed(s.feedPath, {
    ...(s.delimiter ? { delimiter: s.delimiter } : {}),
    ...(s.encoding ? { encoding: s.encoding } : {}),
  });
  const say = (text: string) => process.stderr.write(`${text}\n`);
  say(describeFeed(s.feedPath, feed));
  if (s.mapPath) {
    const changed = applyValueMap(feed, readValueMap(s.mapPath));
    say(`--map ${s.mapPath}: ${changed} ${changed === 1 ? 'value' : 'values'} mapped`);
  }
  const repeated = repeatedNote(feed);
  if (repeated) say(repeated);

  let ca: string | undefined;
  if (s.ca) {
    try {
      ca = readFileSync(s.ca, 'utf8');
    } catch (error) {
      throw new CliError(`cannot read --ca ${s.ca}: ${(error as Error).message}`);
    }
  }
  let progress: Progress | undefined;
  const client = createClient({
    baseUrl: s.url,
    secret: s.secret,
    ...(ca ? { ca } : {}),
    onWait: (info) => progress?.note(waitText(info)),
  });

  // Resume: only for a real run of the very same feed, service, partner and batch size.
  const identity = {
    feedSha256: feed.sha256,
    url: s.url,
    partner: partnerKey(s.secret),
    batchSize: s.batchSize,
  };
  const saved = s.dryRun || s.restart ? undefined : loadState(s.statePath, identity);
  const state: ImportState = saved ?? {
    version: 1,
    ...identity,
    done: 0,
    counts: emptyCounts(),
    failures: [],
    updatedAt: '',
  };
  if (saved) {
    say(
      `resuming: ${saved.done} of ${feed.rows.length} listings were sent by an earlier run (${s.statePath})`,
    );
  } else if (!s.dryRun) {
    // A state of another feed, target or batch size (or one --restart ignores) must not mix its
    // failures into this run's.
    clearState(s.statePath);
  }

  const total = feed.rows.length;
  progress = progressBar(total, { dryRun: s.dryRun });
  progress.update(state.done, state.counts);
  const offset = state.done;
  try {
    await client.listings.upsertMany(
      feed.rows.slice(offset).map((r) => r.listing as ListingInput),
      {
        dryRun: s.dryRun,
        batchSize: s.batchSize,
        signal,
        onBatch: (batch: BatchReport) => {
          const added = record(state, feed, offset, batch.results);
          state.done = offset + batch.indices.at(-1)! + 1;
          if (!s.dryRun) saveState(s.statePath, state, added);
          progress!.update(state.done, state.counts);
        },
      },
    );
  } catch (error) {
    progress.finish();
    writeReport(s.reportPath, state.failures);
    const sent = state.done - offset;
    // Only a state that exists is worth pointing to (a stop before the first answer saves none).
    const resume =
      s.dryRun || state.done === 0
        ? ''
        : ` ${state.done} of ${total} listings are done and recorded in ${s.statePath}; run the same command again to resume.`;
    throw new CliError(`stopped after ${sent} listings: ${errorText(error)}.${resume}`);
  }
  progress.finish();

  // Written now, so that a --mark-missing-sold that is refused still leaves the failed rows visible.
  writeReport(s.reportPath, state.failures);
  let marked: MarkResult = { count: 0, failures: [] };
  if (s.markMissingSold) marked = await markMissingSold(s, feed, client, signal);

  const failures = [...state.failures, ...marked.failures];
  writeReport(s.reportPath, failures);
  if (!s.dryRun) clearState(s.statePath);
  process.stdout.write(
    summary(s, total, state.counts, failures.length, s.markMissingSold ? marked.count : undefined),
  );
  return failures.length > 0 ? 1 : 0;
}

/** One batch's results into the state: counts, and a failure with row, field and value for each refusal. */
function record(state: ImportState, feed: Feed, offset: number, results: ItemResult[]): Failure[] {
  const added: Failure[] = [];
  for (const result of results) {
    const position = offset + result.index;
    const row = feed.rows[position]!;
    if (result.ok) {
      state.counts[result.outcome]++;
      continue;
    }
    state.counts.failed++;
    const listing = row.listing && typeof row.listing === 'object' ? row.listing : {};
    let issues = result.issues?.map((issue) => ({
      path: issue.path,
      message: issue.message,
      ...valueAt(listing, issue.path),
    }));
    // Failures without issues that are still about one field.
    const field =
      result.code === 'INVALID_REFERENCE'
        ? 'externalReference'
        : result.code === 'PROFILE_FORBIDDEN' && (listing.dealerProfileId ?? listing.dealerLocationCode)
          ? listing.dealerProfileId
            ? 'dealerProfileId'
            : 'dealerLocationCode'
          : undefined;
    if (!issues?.length && field)
      issues = [{ path: field, message: result.message, ...valueAt(listing, field) }];
    added.push({
      row: row.row,
      position,
      ...(result.externalReference === undefined ? {} : { reference: result.externalReference }),
      code: result.code,
      message: result.message,
      ...(issues?.length ? { issues } : {}),
    });
  }
  state.failures.push(...added);
  return added;
}

/** The value the feed gave at an issue's path (`price`, `images.3`), when it is a plain value. */
function valueAt(listing: Record<string, unknown>, path: string): { value?: string } {
  let value: unknown = listing;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return {};
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || (typeof value === 'object' && value !== null)) return {};
  return { value: String(value).slice(0, 200) };
}

interface MarkResult {
  /** Listings marked sold (in a dry run: that would be). */
  count: number;
  failures: Failure[];
}

async function markMissingSold(
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

function describeFeed(file: string, feed: Feed): string {
  const how =
    feed.format === 'json'
      ? 'JSON'
      : `CSV, delimiter "${feed.delimiter === '\t' ? 'tab' : feed.delimiter}", ${feed.encoding?.toUpperCase()}`;
  const ignored = feed.columns?.ignored.length ? `; ignored columns: ${feed.columns.ignored.join(', ')}` : '';
  return `${file}: ${feed.rows.length} listings (${how})${ignored}`;
}

/** Rows that repeat an earlier row's reference, named (the last row of each wins). */
function repeatedNote(feed: Feed): string | undefined {
  const firstRow = new Map<unknown, number>();
  const repeats: string[] = [];
  for (const { listing, row } of feed.rows) {
    const ref = listing?.externalReference;
    if (typeof ref !== 'string') continue;
    const first = firstRow.get(ref);
    if (first === undefined) firstRow.set(ref, row);
    else repeats.push(`row ${row} repeats "${ref}" of row ${first}`);
  }
  if (repeats.length === 0) return undefined;
  const shown =
    repeats.slice(0, 5).join('; ') + (repeats.length > 5 ? `; and ${repeats.length - 5} more` : '');
  const count = repeats.length === 1 ? '1 row repeats' : `${repeats.length} rows repeat`;
  return `note: ${count} an earlier reference, the last row of each wins: ${shown}`;
}

function waitText(info: WaitInfo): string {
  const seconds = (info.delayMs / 1000).toFixed(1);
  if (info.reason === 'rate-limited') return `rate limited: waiting ${seconds} s as the service asks`;
  if (info.reason === 'pacing') return `pacing to the rate limit: waiting ${seconds} s`;
  const why = info.status ? `HTTP ${info.status}` : errorText(info.error);
  return `attempt ${info.attempt} failed (${why}): retrying in ${seconds} s`;
}

function errorText(error: unknown): string {
  if (error instanceof ForecourtError) {
    const id = error.requestId ? ` (request ${error.requestId})` : '';
    return `${error.code}: ${error.message}${id}`;
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

function summary(s: Settings, total: number, counts: Counts, failed: number, markedSold?: number): string {
  const verb = s.dryRun ? 'would be ' : '';
  const lines = [
    `${s.dryRun ? 'dry run (nothing written): ' : ''}${total} listings in ${s.feedPath}`,
    `  ${verb}created ${counts.created} · ${verb}updated ${counts.updated} · unchanged ${counts.unchanged} · ` +
      `superseded ${counts.superseded} · failed ${counts.failed}`,
    ...(markedSold === undefined
      ? []
      : [`  ${s.dryRun ? 'would mark' : 'marked'} sold (missing from the feed): ${markedSold}`]),
    failed > 0
      ? `  ${failed} failed: see ${s.reportPath} (row, reference, code, field, value, reason)`
      : `  report: ${s.reportPath} (no failures)`,
  ];
  return `${lines.join('\n')}\n`;
}
