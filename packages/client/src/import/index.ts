import { readFileSync } from 'node:fs';
import { type BatchReport, createClient, type ItemResult, type ListingInput } from '../index.js';
import { CliError, UsageError } from './errors.js';
import { type Feed, readFeed } from './feed.js';
import { type MarkResult, markMissingSold } from './mark-missing-sold.js';
import { describeFeed, errorText, repeatedNote, summary, waitText } from './messages.js';
import { type Progress, progressBar } from './progress.js';
import { writeReport } from './report.js';
import { IMPORT_USAGE, type Settings, settings } from './settings.js';
import {
  clearState,
  emptyCounts,
  type Failure,
  type ImportState,
  loadState,
  partnerKey,
  saveState,
} from './state.js';
import { applyValueMap, readValueMap } from './value-map.js';

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
