import assert from 'node:assert/strict';
import { EXT, listingBody, type Reply, type TestApp, unique } from './app.js';
import { bulkUpsert } from './listings-api.js';

/** Shared helpers for the read-side tests (auth, listings, locations). */

/** A UUID no test ever creates (random v4, so it is unknown in any database). */
export { randomUUID as unknownId } from 'node:crypto';

/** Builds a query string; values are URL-encoded. */
export function qs(params: Record<string, string | number | boolean>): string {
  const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** GET on the partner API; asserts 200 and returns the parsed body. */
export async function getOk(app: TestApp, secret: string, path: string): Promise<any> {
  const reply = await app.call('GET', `${EXT}${path}`, { secret });
  assert.equal(reply.status, 200, `GET ${path} → ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Asserts an error envelope with this status and code; returns the error object. */
export function assertError(reply: Reply, status: number, code: string): any {
  assert.equal(reply.status, status, `expected ${status} ${code}, got ${reply.status} ${reply.text}`);
  assert.equal(reply.body?.error?.code, code, reply.text);
  assert.equal(typeof reply.body.error.message, 'string');
  assert.equal(typeof reply.body.error.requestId, 'string');
  assert.equal(reply.body.data, undefined);
  return reply.body.error;
}

/** Asserts 400 INVALID_QUERY with an issue whose path ends in `param`. */
export function assertInvalidQuery(reply: Reply, param: string): void {
  const error = assertError(reply, 400, 'INVALID_QUERY');
  assert.ok(Array.isArray(error.issues) && error.issues.length > 0, reply.text);
  assert.ok(
    error.issues.some((i: { path: string }) => i.path.split('.').at(-1) === param),
    `no issue names "${param}": ${JSON.stringify(error.issues)}`,
  );
  for (const issue of error.issues) {
    assert.equal(typeof issue.message, 'string');
    assert.equal(typeof issue.code, 'string');
  }
}

/**
 * The four pagination fields of a list of listings (docs/api.md#get-listings), as
 * [page, pageSize, totalItems, totalPages] (other fields, such as a cursor, may be present too).
 */
export function assertPagination(body: any, expected: [number, number, number, number]): void {
  const { page, pageSize, totalItems, totalPages } = body.pagination;
  assert.deepEqual([page, pageSize, totalItems, totalPages], expected);
}

/**
 * Pins a listing's timestamps by SQL, so that orders and `updatedSince` boundaries are exact
 * (timestamps written by the API are microsecond-precise but read back with milliseconds).
 */
export async function pinTimes(app: TestApp, id: string, updatedAt: Date, createdAt: Date): Promise<void> {
  await app.running.db.query(
    'TestPinListingTimes',
    'UPDATE listings SET updated_at = $2, created_at = $3 WHERE id = $1',
    [id, updatedAt, createdAt],
  );
}

export const ids = (items: { id: string }[]) => items.map((i) => i.id);
export const sorted = (values: readonly string[]) => [...values].sort();

/** Compares by key, then by id (the service's tie-break); `dir` -1 reverses both. */
export function byKeyThenId<T extends { id: string }>(key: (item: T) => number | null, dir: 1 | -1 = 1) {
  return (a: T, b: T): number => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) {
      // Missing values (a draft without a price) sort last in both directions.
      if (ka === null) return 1;
      if (kb === null) return -1;
      return (ka - kb) * dir;
    }
    return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * dir;
  };
}

/** Runs SQL on the app's database (for what the API cannot do: pinning times, dating history). */
export function sql(app: TestApp, text: string, params: unknown[] = []): Promise<Record<string, any>[]> {
  return app.running.db.query<Record<string, any>>('TestSql', text, params);
}

export interface Seeded {
  id: string;
  ref: string;
  dealer: string;
  status: string;
  price: number | null;
  updatedAt: Date;
  createdAt: Date;
}

/**
 * Creates listings with one bulk upsert at the locations named by key in `profileIds`, then pins
 * each one's timestamps, so every expected order can be computed in the test.
 */
export async function seedListings(
  app: TestApp,
  writer: string,
  profileIds: Record<string, string>,
  plan: { dealer: string; status: string; price: number | null; updatedAt: Date; createdAt?: Date }[],
): Promise<Seeded[]> {
  const items = plan.map((p) => ({
    externalReference: unique(`seed-${p.dealer}`),
    ...listingBody({ dealerProfileId: profileIds[p.dealer], status: p.status, price: p.price }),
  }));
  const created = await bulkUpsert(app, writer, items);
  const rows: Seeded[] = [];
  for (const [i, p] of plan.entries()) {
    const ref = items[i]!.externalReference;
    const row = { ...p, id: created[ref]!, ref, createdAt: p.createdAt ?? p.updatedAt };
    await pinTimes(app, row.id, row.updatedAt, row.createdAt);
    rows.push(row);
  }
  return rows;
}

/** Ids of the seeded rows that `keep` selects, in `order` (default: updatedAt, then id). */
export function idsOf(
  rows: readonly Seeded[],
  keep: (r: Seeded) => boolean,
  order = byKeyThenId<Seeded>((r) => r.updatedAt.getTime()),
): string[] {
  return ids(rows.filter(keep).sort(order));
}

export const DAY_MS = 86_400_000;

/** The previous calendar month in UTC: its first instant (ms) and its number of days. */
export function previousMonthUtc(now: Date): { start: number; days: number } {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  return { start, days: Math.round((end - start) / DAY_MS) };
}

/**
 * The expected mean, over the day-ends start + k days (k = 1..days), of how many of these
 * listings were active; each listing is its status changes [status, instant] in order.
 */
export function meanActiveAtDayEnds(listings: [string, number][][], start: number, days: number): number {
  let sum = 0;
  for (let k = 1; k <= days; k++) {
    const end = start + k * DAY_MS;
    for (const changes of listings) if (changes.filter(([, t]) => t < end).at(-1)?.[0] === 'active') sum++;
  }
  return sum / days;
}
