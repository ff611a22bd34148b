import { type BatchReport, createClient, type ListingInput } from '../index.js';
import { testModeNotice } from '../mode.js';
import { readColumnsFile } from './column-file.js';
import { CliError, readCaFile } from './errors.js';
import { localFailure, record, toldRows } from './failures.js';
import { readFeed } from './feed.js';
import { type MarkResult, markMissingSold } from './mark-missing-sold.js';
import { describeFeed, errorText, repeatedNote, summary, waitText } from './messages.js';
import { type Progress, progressBar } from './progress.js';
import { writeReport } from './report.js';
import type { Settings } from './settings.js';
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

/**
 * One import: read (and map) the feed, resume where an earlier run of the same feed stopped,
 * upload in batches with a progress bar, write the failure report, then --mark-missing-sold.
 * Returns the exit code; a run that cannot go on throws a CliError.
 */
export async function run(s: Settings, signal: AbortSignal): Promise<number> {
  const feed = readFeed(s.feedPath, {
    ...(s.delimiter ? { delimiter: s.delimiter } : {}),
    ...(s.encoding ? { encoding: s.encoding } : {}),
    ...(s.numberFormat ? { numberFormat: s.numberFormat } : {}),
    ...(s.columnsPath ? { columns: readColumnsFile(s.columnsPath) } : {}),
    ...(s.dateOrder ? { dateOrder: s.dateOrder } : {}),
    ...(s.title === undefined ? {} : { title: s.title }),
    ...(s.defaultLocation ? { location: s.defaultLocation } : {}),
  });
  const say = (text: string) => process.stderr.write(`${text}\n`);
  const mode = testModeNotice(s.secret);
  if (mode) say(mode);
  say(describeFeed(s.feedPath, feed));
  for (const note of feed.notes) say(note);
  if (s.mapPath) {
    const changed = applyValueMap(feed, readValueMap(s.mapPath));
    say(`--map ${s.mapPath}: ${changed} ${changed === 1 ? 'value' : 'values'} mapped`);
  }
  const repeated = repeatedNote(feed);
  if (repeated) say(repeated);

  const ca = readCaFile(s.ca);
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
  const refused = feed.rows.filter((r) => r.refused).length;
  if (refused > 0) {
    say(
      `${refused} ${refused === 1 ? 'row is' : 'rows are'} not sent: text with control characters ` +
        '(U+0080–U+009F) after decoding, see the report',
    );
  }
  progress = progressBar(total, { dryRun: s.dryRun });
  progress.update(state.done, state.counts);
  const offset = state.done;
  // Rows the importer refused itself are not sent; they are recorded in feed order, with the batch
  // that passes them (so a resumed run neither repeats nor loses them).
  const positions: number[] = [];
  const local: number[] = [];
  for (let p = offset; p < total; p++) (feed.rows[p]!.refused ? local : positions).push(p);
  let localDone = 0;
  const recordLocal = (before: number): Failure[] => {
    const added: Failure[] = [];
    for (; localDone < local.length && local[localDone]! < before; localDone++) {
      added.push(localFailure(feed, local[localDone]!));
    }
    state.counts.failed += added.length;
    state.failures.push(...added);
    return added;
  };
  const report = (failures: Failure[]) =>
    writeReport(s.reportPath, [...failures, ...toldRows(feed, failures, state.done)]);
  try {
    await client.listings.upsertMany(
      positions.map((p) => feed.rows[p]!.listing as ListingInput),
      {
        dryRun: s.dryRun,
        batchSize: s.batchSize,
        signal,
        onBatch: (batch: BatchReport) => {
          const last = positions[batch.indices.at(-1)!]!;
          const added = [...recordLocal(last), ...record(state, feed, positions, batch.results)];
          state.done = last + 1;
          if (!s.dryRun) saveState(s.statePath, state, added);
          progress!.update(state.done, state.counts);
        },
      },
    );
    if (localDone < local.length) {
      const added = recordLocal(total);
      state.done = total;
      if (!s.dryRun) saveState(s.statePath, state, added);
      progress.update(state.done, state.counts);
    }
  } catch (error) {
    progress.finish();
    report(state.failures);
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
  report(state.failures);
  let marked: MarkResult = { count: 0, failures: [] };
  if (s.markMissingSold) marked = await markMissingSold(s, feed, client, signal);

  const failures = [...state.failures, ...marked.failures];
  const told = toldRows(feed, failures, state.done);
  writeReport(s.reportPath, [...failures, ...told]);
  if (!s.dryRun) clearState(s.statePath);
  process.stdout.write(
    summary(
      s,
      total,
      state.counts,
      failures.length,
      s.markMissingSold ? marked.count : undefined,
      told.length,
    ),
  );
  return failures.length > 0 ? 1 : 0;
}
