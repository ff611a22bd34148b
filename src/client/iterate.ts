import type { CallOptions, ForecourtClient, IterateQuery, Listing, ListingIterator } from './types.js';

/**
 * Follows `pagination.nextCursor` (GET /listings sorted by updatedAt) until `hasMore` is false.
 * docs/sync.md explains why cursors, not page numbers, never miss a change. The cursor moves only
 * once the consumer has taken a whole page (asks for what comes after it): a consumer that stops
 * or crashes mid-page resumes at that page and sees some listings twice, never none.
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
    for (;;) {
      const page = await list(
        // The same filters on every request: a cursor is only valid with the ones it was issued for.
        { ...filters, sort: 'updatedAt', ...(position ? { cursor: position } : {}) },
        options,
      );
      // An empty scope may answer without a cursor: the position stays where it was.
      const next = page.pagination.nextCursor ?? position;
      const hasMore = page.pagination.hasMore === true && next !== position;
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
