import assert from 'node:assert/strict';
import type { TestApp } from './app.js';

/** A synced copy of one listing: what the sync tests compare with the database. */
export interface Synced {
  updatedAt: string;
  status: string;
  price: number | null;
  title: string;
}

/**
 * A partner's sync loop: follow nextCursor from `cursor` while hasMore, keeping the latest state of
 * each listing in `copy` (newest updatedAt wins). Returns the last cursor and how many pages it took.
 */
export async function follow(
  app: TestApp,
  secret: string,
  query: string,
  cursor: string | undefined,
  copy: Map<string, Synced>,
) {
  let next = cursor;
  let pages = 0;
  for (;;) {
    const reply = await app.call(
      'GET',
      `/api/external/v1/listings?${query}${next ? `&cursor=${encodeURIComponent(next)}` : ''}`,
      { secret },
    );
    assert.equal(reply.status, 200, reply.text);
    pages++;
    for (const l of reply.body.data) {
      const known = copy.get(l.id);
      if (!known || known.updatedAt <= l.updatedAt)
        copy.set(l.id, { updatedAt: l.updatedAt, status: l.status, price: l.price, title: l.title });
    }
    assert.ok(reply.body.pagination.nextCursor, 'every updatedAt-sorted page carries a cursor');
    next = reply.body.pagination.nextCursor;
    if (!reply.body.pagination.hasMore) return { cursor: next as string, pages };
  }
}
