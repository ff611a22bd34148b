import type { ItemResult } from '../index.js';
import type { Feed } from './feed.js';
import type { Failure, ImportState } from './state.js';

/** One batch's results into the state: counts, and a failure with row, field and value for each refusal. */
export function record(state: ImportState, feed: Feed, offset: number, results: ItemResult[]): Failure[] {
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
