import { sleep } from './retry.js';
import type { CallOptions, ForecourtClient, IterateQuery, Listing, ListingIterator } from './types.js';

/** Waits between asks while the cursor cannot move yet: from this, doubling, up to the maximum. */
const SETTLE_WAIT_MS = { first: 50, max: 1_000 };

/**
 * Follows `pagination.nextCursor` (GET /listings sorted by updatedAt) until `hasMore` is false,
 * which the service answers only when nothing of the filter lies after the cursor: the walk is
 * complete, including every write acknowledged before it began. docs/sync.md explains why cursors,
 * not page numbers, never miss a change. The cursor moves only once the consumer has taken a whole
 * page (asks for what comes after it): a consumer that stops or crashes mid-page resumes at that
 * page and sees some listings twice, never none.
 */
export function iterateListings(
  list: ForecourtClient['listings']['list'],
  query: IterateQuery & { cursor?: string } = {},
  options?: CallOptions,
): ListingIterator {
  const { cursor: start, ...filters } = query;
  let cursor = start;

  async function* pages() {
    let position = cursor;
    let wait = SETTLE_WAIT_MS.first;
    for (;;) {
      const page = await list(
        // The same filters on every request: a cursor is only valid with the ones it was issued for.
        { ...filters, sort: 'updatedAt', ...(position ? { cursor: position } : {}) },
        options,
      );
      // An empty scope may answer without a cursor: the position stays where it was.
      const next = page.pagination.nextCursor ?? position;
      const hasMore = page.pagination.hasMore === true;
      if (hasMore && next === position && position !== undefined) {
        // Listings lie after the cursor, but a write that began before them is still open, so the
        // cursor cannot pass them yet (it will within the service's write limit). Ask again
        // shortly instead of yielding the same listings twice or ending short.
        await sleep(wait, options?.signal);
        wait = Math.min(wait * 2, SETTLE_WAIT_MS.max);
        continue;
      }
      wait = SETTLE_WAIT_MS.first;
      yield { data: page.data, cursor: next, hasMore };
      cursor = next;
      if (!hasMore) return;
      position = next;
    }
  }

  return {
    get cursor() {
      return cursor;
    },
    pages,
    async *[Symbol.asyncIterator](): AsyncGenerator<Listing> {
      for await (const page of pages()) yield* page.data;
    },
  };
}
