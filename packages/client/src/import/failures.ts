import type { ItemResult } from '../index.js';
import { countedAs } from '../upsert-many.js';
import type { Feed } from './feed.js';
import type { Failure, ImportState } from './state.js';

/**
 * One batch's results into the state: counts, and a failure with row, field and value for each
 * refusal. `positions` gives the feed position of each item sent (rows the importer refused itself
 * are not sent).
 */
export function record(
  state: ImportState,
  feed: Feed,
  positions: readonly number[],
  results: ItemResult[],
): Failure[] {
  const added: Failure[] = [];
  for (const result of results) {
    const position = positions[result.index]!;
    const row = feed.rows[position]!;
    if (result.ok) {
      state.counts[countedAs(result.outcome)]++; // a dry run's would_create counts as created
      continue;
    }
    state.counts.failed++;
    const listing = row.listing && typeof row.listing === 'object' ? row.listing : {};
    let issues = result.issues?.map((issue) => ({
      path: issue.path,
      // A number the tool would not guess at was sent as text: its own reason says more than the
      // service's "must be a number" (which format it could be, and --number-format).
      message: row.notes?.[issue.path] ?? issue.message,
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

/** A row the importer did not send (./feed.ts: `refused`), as a failure of the report. */
export function localFailure(feed: Feed, position: number): Failure {
  const row = feed.rows[position]!;
  const reference = row.listing?.externalReference;
  const issues = Object.entries(row.refused ?? {}).map(([path, message]) => ({
    path,
    message,
    ...valueAt(row.listing, path),
  }));
  return {
    row: row.row,
    position,
    ...(typeof reference === 'string' ? { reference } : {}),
    code: 'NOT_SENT',
    message: 'the importer did not send this row',
    issues,
  };
}

/** What the report tells of rows that were taken but not as the feed wrote them (price on request). */
export function toldRows(feed: Feed, failures: readonly Failure[], done: number): Failure[] {
  const failed = new Set(failures.map((f) => f.position));
  return feed.rows.flatMap((row, position) => {
    if (!row.told || position >= done || failed.has(position)) return [];
    const reference = row.listing?.externalReference;
    return [
      {
        row: row.row,
        position,
        ...(typeof reference === 'string' ? { reference } : {}),
        code: row.told.code,
        message: row.told.reason,
        issues: [{ path: row.told.field, message: row.told.reason, value: row.told.value }],
      },
    ];
  });
}
