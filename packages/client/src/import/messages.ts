import { ForecourtError, type WaitInfo } from '../index.js';
import { ENCODING_NAME } from './encoding.js';
import type { Feed } from './feed.js';
import type { Settings } from './settings.js';
import type { Counts } from './state.js';

/** What `forecourt import` tells: the feed it read, its repeats, waits, errors and the summary. */

export function describeFeed(file: string, feed: Feed): string {
  const encoding = feed.encoding ? ENCODING_NAME[feed.encoding] : '';
  const why = feed.encodingWhy ? `: ${feed.encodingWhy}; --encoding says otherwise` : '';
  const how =
    feed.format === 'json'
      ? 'JSON'
      : `CSV, delimiter "${feed.delimiter === '\t' ? 'tab' : feed.delimiter}", encoding ${encoding}${why}`;
  const ignored = feed.columns?.ignored.length ? `; ignored columns: ${feed.columns.ignored.join(', ')}` : '';
  return `${file}: ${feed.rows.length} listings (${how})${ignored}`;
}

/** Rows that repeat an earlier row's reference, named (the last row of each wins). */
export function repeatedNote(feed: Feed): string | undefined {
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

export function waitText(info: WaitInfo): string {
  const seconds = (info.delayMs / 1000).toFixed(1);
  if (info.reason === 'rate-limited') return `rate limited: waiting ${seconds} s as the service asks`;
  if (info.reason === 'pacing') return `pacing to the rate limit: waiting ${seconds} s`;
  const why = info.status ? `HTTP ${info.status}` : errorText(info.error);
  return `attempt ${info.attempt} failed (${why}): retrying in ${seconds} s`;
}

export function errorText(error: unknown): string {
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

export function summary(
  s: Settings,
  total: number,
  counts: Counts,
  failed: number,
  markedSold?: number,
  told = 0,
): string {
  const verb = s.dryRun ? 'would be ' : '';
  const lines = [
    `${s.dryRun ? 'dry run (nothing written): ' : ''}${total} listings in ${s.feedPath}`,
    `  ${verb}created ${counts.created} · ${verb}updated ${counts.updated} · unchanged ${counts.unchanged} · ` +
      `superseded ${counts.superseded} · failed ${counts.failed}`,
    ...(markedSold === undefined
      ? []
      : [`  ${s.dryRun ? 'would mark' : 'marked'} sold (missing from the feed): ${markedSold}`]),
    ...(told > 0
      ? [
          `  ${told} ${s.dryRun ? 'would be' : told === 1 ? 'was' : 'were'} imported as ${told === 1 ? 'a draft' : 'drafts'} (price on request): named in the report`,
        ]
      : []),
    failed > 0
      ? `  ${failed} failed: see ${s.reportPath} (row, reference, code, field, value, reason)`
      : `  report: ${s.reportPath} (no failures)`,
  ];
  return `${lines.join('\n')}\n`;
}
