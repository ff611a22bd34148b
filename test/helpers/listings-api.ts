import assert from 'node:assert/strict';
import { EXT, type Reply, type TestApp } from './app.js';

/**
 * The partner API's listing calls for tests, one contract each: a plain name sends the request and
 * returns the reply (for tests about refusals); `…Ok` (and putListing, bulkUpsert) also assert
 * success and return what a test needs next.
 */

/** PUT /listings/{reference}; `rawRef` sends the reference unencoded (to test odd paths). */
export function put(
  app: TestApp,
  secret: string,
  reference: string,
  body: unknown,
  options: { query?: string; rawRef?: boolean } = {},
): Promise<Reply> {
  const path = options.rawRef ? reference : encodeURIComponent(reference);
  return app.call('PUT', `${EXT}/listings/${path}${options.query ?? ''}`, { secret, body });
}

/** PUT that must succeed (with exactly `status` when given); returns the reply's `data`. */
export async function putOk(
  app: TestApp,
  secret: string,
  reference: string,
  body: unknown,
  status?: 200 | 201,
): Promise<any> {
  const reply = await put(app, secret, reference, body);
  const ok = status ? reply.status === status : reply.status === 200 || reply.status === 201;
  assert.ok(ok, `PUT ${reference} → ${reply.status} ${reply.text}`);
  return reply.body.data;
}

/** PUT that must succeed; returns the listing's service id. */
export async function putListing(
  app: TestApp,
  secret: string,
  reference: string,
  body: unknown,
): Promise<string> {
  return (await putOk(app, secret, reference, body)).listingId;
}

export function bulk(app: TestApp, secret: string, body: unknown, query = ''): Promise<Reply> {
  return app.call('POST', `${EXT}/listings/bulk-upsert${query}`, { secret, body });
}

/** Bulk upsert in which every item must succeed; returns the ids by reference. */
export async function bulkUpsert(
  app: TestApp,
  secret: string,
  items: Record<string, unknown>[],
): Promise<Record<string, string>> {
  const reply = await bulk(app, secret, items);
  assert.equal(reply.status, 200, reply.text);
  assert.equal(reply.body.data.errorCount, 0, JSON.stringify(reply.body.data.errors));
  return Object.fromEntries(
    reply.body.data.results.map((r: { externalReference: string; listingId: string }) => [
      r.externalReference,
      r.listingId,
    ]),
  );
}

/** POST /listings/{reference}/status with any body. */
export function setStatus(app: TestApp, secret: string, reference: string, body: unknown): Promise<Reply> {
  return app.call('POST', `${EXT}/listings/${encodeURIComponent(reference)}/status`, { secret, body });
}

/** A status change that must succeed. */
export async function setStatusOk(
  app: TestApp,
  secret: string,
  reference: string,
  status: string,
): Promise<void> {
  const reply = await setStatus(app, secret, reference, { status });
  assert.equal(reply.status, 200, reply.text);
}

export function remove(app: TestApp, secret: string, reference: string): Promise<Reply> {
  return app.call('DELETE', `${EXT}/listings/${encodeURIComponent(reference)}`, { secret });
}

/** GET /listings/{id}: the listing's `data`, or undefined on 404. */
export async function getListing(app: TestApp, secret: string, id: string): Promise<any> {
  const reply = await app.call('GET', `${EXT}/listings/${id}`, { secret });
  if (reply.status === 404) return undefined;
  assert.equal(reply.status, 200, reply.text);
  return reply.body.data;
}

/** Every item of a list under the partner API (`path` like /listings?status=all), page by page. */
export async function allPages(app: TestApp, secret: string, path: string): Promise<any[]> {
  const items: any[] = [];
  for (let page = 1; page <= 100; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const reply = await app.call('GET', `${EXT}${path}${sep}pageSize=200&page=${page}`, { secret });
    assert.equal(reply.status, 200, `GET ${path} → ${reply.status} ${reply.text}`);
    items.push(...reply.body.data);
    if (page >= reply.body.pagination.totalPages) return items;
  }
  throw new Error(`more than 100 pages at ${path}`);
}

/** Every listing (any status) the partner can see. */
export const allListings = (app: TestApp, secret: string) => allPages(app, secret, '/listings?status=all');
