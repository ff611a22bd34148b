import type { Projection, Queryable } from '../db.js';
import type { Mode } from './mode.js';
import { modeSql } from './mode.js';
import { LISTING_COLUMNS, LISTING_JOINS, rowToStoredListing, type StoredListing } from './rows.js';

export const SORTS = ['updatedAt', '-updatedAt', 'createdAt', '-createdAt', 'price', '-price'] as const;
export type Sort = (typeof SORTS)[number];

// `updatedAt` (the default, and the sync cursor's order) follows the sync position, changed_at
// (migration 021): a partner's edit sets it to updatedAt, and a change of the service's (an image
// check's result) moves it alone, so a walk sees every change, once, in order (docs/sync.md).
// `-updatedAt` is its reverse: sorted by updated_at it gave the same order as updatedAt for a
// listing a check had moved (most recently changed last both ways).
const SORT_SQL: Record<Sort, string> = {
  updatedAt: 'l.changed_at ASC, l.id ASC',
  '-updatedAt': 'l.changed_at DESC, l.id DESC',
  createdAt: 'l.created_at ASC, l.id ASC',
  '-createdAt': 'l.created_at DESC, l.id DESC',
  // Listings without a price (drafts) sort last either way.
  price: 'l.price ASC NULLS LAST, l.id ASC',
  '-price': 'l.price DESC NULLS LAST, l.id DESC',
};

const STATUSES = ['active', 'pending', 'sold', 'draft'];
/** Past this many rows into a list, walking each dealer's index separately stops paying off. */
const PER_DEALER_MAX_ROWS = 2000;

/** A position in the walk's (changedAt, id) order: changedAt to the microsecond, as the database has it. */
export interface Position {
  ts: string;
  id: string;
}

export interface ListingFilter {
  /** Live listings, or one partner's test listings (docs/test-mode.md); always named. */
  mode: Mode;
  /** Dealer profiles to show; null = every profile (global partner, no filter). */
  profileIds: readonly string[] | null;
  /** One status, several (a webhook endpoint's filter), or null for all. */
  status: string | readonly string[] | null;
  updatedSince: Date | null;
  /** Only the listings this partner wrote (?mine=true); null = every partner's. */
  partnerId: string | null;
  /** With partnerId: only that partner's listing with this reference (its unique key). */
  reference: string | null;
  /** Only listings that are live, or that are not (docs/images.md, "Readiness"). */
  readiness?: 'live' | 'not_live' | null;
  /** Only listings with at least one image in this check state. */
  imageState?: string | null;
}

/**
 * Live (docs/images.md, "Readiness"): active, priced, and at least one image checked ok; the
 * readiness the stored text shows, as a predicate on `l`. An index probe per image of the
 * listing (listing_images' key, then image_checks').
 */
const LIVE = `(l.status = 'active' AND l.price IS NOT NULL AND EXISTS (
  SELECT 1 FROM listing_images li JOIN image_checks c ON c.url = li.url
  WHERE li.listing_id = l.id AND c.state = 'ok'))`;

/** A listing read as stored; a projection selects from `l` and LISTING_JOINS. */
const STORED: Projection<StoredListing> = { columns: LISTING_COLUMNS, read: rowToStoredListing };

export interface PageRow<T = StoredListing> {
  listing: T;
  /** The row's place in the (updatedAt, id) order, to the microsecond. */
  position: Position;
  /** updatedAt lies behind the commit horizon: no transaction still open can write before it. */
  settled: boolean;
}

/** A stretch of the (updatedAt, id) order: strictly after `after`, up to `through` included. */
export interface Range {
  after?: Position | null;
  through?: Position | null;
}

/** Where a page lies (Range), the commit horizon its rows are settled against, what each row is read as. */
type PageOptions<T> = Range & { horizon: string | null; projection?: Projection<T> };

const statusList = (status: ListingFilter['status']): readonly string[] =>
  status === null ? STATUSES : typeof status === 'string' ? [status] : status;

/** Builds the WHERE clause from only the predicates in use, so the planner sees a plain query. */
function where(filter: ListingFilter, params: unknown[], range: Range = {}): string {
  const clauses: string[] = [modeSql(filter.mode, params)];
  if (range.after) {
    params.push(range.after.ts, range.after.id);
    clauses.push(`(l.changed_at, l.id) > ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  if (range.through) {
    params.push(range.through.ts, range.through.id);
    clauses.push(`(l.changed_at, l.id) <= ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  if (filter.profileIds !== null) {
    params.push(filter.profileIds);
    clauses.push(`l.dealer_profile_id = ANY($${params.length}::uuid[])`);
  }
  if (typeof filter.status === 'string') {
    params.push(filter.status);
    clauses.push(`l.status = $${params.length}`);
  } else if (filter.status !== null) {
    params.push(filter.status);
    clauses.push(`l.status = ANY($${params.length}::text[])`);
  }
  if (filter.updatedSince !== null) {
    params.push(filter.updatedSince);
    clauses.push(`l.updated_at >= $${params.length}`);
  }
  if (filter.partnerId !== null) {
    params.push(filter.partnerId);
    clauses.push(`l.partner_id = $${params.length}`);
  }
  if (filter.reference !== null) {
    params.push(filter.reference);
    clauses.push(`l.external_reference = $${params.length}`);
  }
  if (filter.readiness) clauses.push(filter.readiness === 'live' ? LIVE : `NOT ${LIVE}`);
  if (filter.imageState) {
    params.push(filter.imageState);
    clauses.push(`EXISTS (SELECT 1 FROM listing_images li JOIN image_checks c ON c.url = li.url
      WHERE li.listing_id = l.id AND c.state = $${params.length})`);
  }
  return `WHERE ${clauses.join(' AND ')}`;
}

/**
 * Where a page's rows come from. A partner's scope is often dozens of dealers: "their listings in
 * updatedAt order" would read every entry of all of them (14,000 for a 40-location group at 1M
 * listings) to keep the first 50. Instead, each (dealer, status) pair gives its first rows from
 * the (dealer_profile_id, status, updated_at, id) index, and only those are merged: 50 × pairs.
 * Deep page-number access goes back to one scan (see PER_DEALER_MAX_ROWS).
 */
function pageSource(
  filter: ListingFilter,
  sort: Sort,
  rowsNeeded: number,
  params: unknown[],
  range: Range = {},
): string {
  const perDealer =
    filter.profileIds !== null &&
    filter.profileIds.length > 1 &&
    (sort === 'updatedAt' || sort === '-updatedAt') &&
    rowsNeeded <= PER_DEALER_MAX_ROWS;
  if (!perDealer) return `listings l ${where(filter, params, range)}`;
  const rest = where({ ...filter, profileIds: null, status: null }, params, range);
  params.push(filter.profileIds, statusList(filter.status), rowsNeeded);
  const n = params.length;
  return `unnest($${n - 2}::uuid[]) AS d(id) CROSS JOIN unnest($${n - 1}::text[]) AS s(status)
    CROSS JOIN LATERAL (
      SELECT l.id, l.changed_at, l.updated_at FROM listings l
      ${rest} AND l.dealer_profile_id = d.id AND l.status = s.status
      ORDER BY ${SORT_SQL[sort]} LIMIT $${n}
    ) l`;
}

/** Whether countStatement sums counters only (no listing read): filtered by dealers and status alone. */
const countedFromCounters = (filter: ListingFilter): boolean =>
  !filter.mode.test &&
  filter.partnerId === null &&
  filter.reference === null &&
  filter.updatedSince === null &&
  !filter.readiness &&
  !filter.imageState;

/**
 * The statement that counts a list (totalItems), at a cost that does not grow with the number of
 * matches; it appends its parameters to `params` and selects one row, `n`. Filtered by dealers and
 * status only, it sums the trigger-kept counters of migration 004. With `updatedSince` as well (a
 * sync from some point), it counts whichever side of that point is smaller: the counters' total
 * minus the listings before it when the point is old (a first full sync counts nothing), the
 * listings from it on when it is recent. Counters and listings are read in one statement, so both
 * come from one snapshot. `mine` and `externalReference` filters have no counters and are counted
 * (a partner's own listings; 0 or 1 row). `sideProbe`: see listingReadStore.
 */
function countStatement(
  filter: ListingFilter,
  params: unknown[],
  sideProbe: number,
): { name: string; sql: string } {
  // The image filters have no counters either: their matches are counted. The counters are live
  // listings' only: a test list is counted (at most TEST_LISTING_LIMIT rows, on their own index).
  if (
    filter.mode.test ||
    filter.partnerId !== null ||
    filter.reference !== null ||
    filter.readiness ||
    filter.imageState
  )
    return { name: 'CountListings', sql: `SELECT count(*) AS n FROM listings l ${where(filter, params)}` };
  const counters: string[] = [];
  // Live only from here (a test list is counted above): the counters hold live listings only, and
  // the listings read beside them must be the same ones.
  const listings: string[] = ['NOT l.test'];
  if (filter.profileIds !== null) {
    params.push(filter.profileIds);
    counters.push(`dealer_profile_id = ANY($${params.length}::uuid[])`);
    listings.push(`l.dealer_profile_id = ANY($${params.length}::uuid[])`);
  }
  // Every status named, so the counters and the listings are filtered alike (EXPLAIN at 1M: the
  // side counts range over the (updated_at, id) index and stop at their LIMIT).
  params.push(statusList(filter.status));
  counters.push(`status = ANY($${params.length}::text[])`);
  listings.push(`l.status = ANY($${params.length}::text[])`);
  const total = `SELECT coalesce(sum(n), 0)::bigint AS n FROM listing_counts WHERE ${counters.join(' AND ')}`;
  if (filter.updatedSince === null) return { name: 'CountListingsFromCounters', sql: total };
  params.push(filter.updatedSince);
  const since = `$${params.length}::timestamptz`;
  const match = listings.join(' AND ');
  // First the side before the point, up to `sideProbe` rows: an old point (a first full sync)
  // ends here. Otherwise the side from the point on, up to half the total: a recent point ends
  // there. Only a point near the middle counts a whole side (about half of the matches).
  const before = `SELECT 1 FROM listings l WHERE ${match} AND l.updated_at < ${since}`;
  const from = `SELECT 1 FROM listings l WHERE ${match} AND l.updated_at >= ${since}`;
  return {
    name: 'CountListingsSince',
    sql: `WITH total AS (${total}),
         probe AS (SELECT count(*)::bigint AS n FROM (${before} LIMIT ${sideProbe}) b),
         recent AS (SELECT count(*)::bigint AS n FROM (${from} LIMIT (SELECT n / 2 + 1 FROM total)) f)
         SELECT CASE
           WHEN probe.n < ${sideProbe} THEN total.n - probe.n
           WHEN (SELECT n FROM recent) <= total.n / 2 THEN (SELECT n FROM recent)
           ELSE total.n - (SELECT count(*) FROM (${before}) b) END AS n
         FROM total, probe`,
  };
}

/**
 * `sideProbe`: how many listings before an updatedSince point are counted before the other side
 * is tried (see count); tests lower it to reach every branch with a few listings.
 */
export function listingReadStore(db: Queryable, sideProbe = 5000) {
  async function count(filter: ListingFilter, tx: Queryable = db): Promise<number> {
    const params: unknown[] = [];
    const { name, sql } = countStatement(filter, params, sideProbe);
    const rows = await tx.query<{ n: number }>(name, sql, params);
    return rows[0]!.n;
  }

  /** A page, with its list's total (countStatement) on each row when `withTotal`. */
  async function readPage<T>(
    filter: ListingFilter,
    sort: Sort,
    limit: number,
    offset: number,
    options: PageOptions<T>,
    withTotal: boolean,
    tx: Queryable,
  ): Promise<{ rows: PageRow<T>[]; total: number | undefined }> {
    const projection = options.projection ?? (STORED as unknown as Projection<T>);
    const params: unknown[] = [];
    const source = pageSource(filter, sort, limit + offset, params, options);
    params.push(limit, offset, options.horizon ?? '-infinity');
    const n = params.length;
    // An uncorrelated subquery: run once for the statement (an InitPlan), not per row.
    const total = withTotal ? `(${countStatement(filter, params, sideProbe).sql}) AS total_n, ` : '';
    // The page is chosen on the narrow listings index first, then joined: an OFFSET then skips
    // index entries rather than fully built rows. Positions are formatted after the LIMIT
    // (fix from the benchmarks: formatted inside, page 400 formatted 20,000 skipped rows).
    const rows = await tx.query(
      'ListListings',
      `WITH page AS (
         SELECT l.id, l.changed_at AS pos
         FROM ${source}
         ORDER BY ${SORT_SQL[sort]} LIMIT $${n - 2} OFFSET $${n - 1}
       )
       SELECT ${total}to_char(page.pos AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS pos_ts,
              page.pos < $${n}::timestamptz AS settled,
              l.id, ${projection.columns}
       FROM page JOIN listings l ON l.id = page.id ${projection.joins ?? LISTING_JOINS}
       ORDER BY ${SORT_SQL[sort]}`,
      params,
    );
    return {
      rows: rows.map((r) => ({
        listing: projection.read(r),
        position: { ts: r.pos_ts as string, id: r.id as string },
        settled: r.settled as boolean,
      })),
      total: rows.length > 0 && withTotal ? (rows[0]!.total_n as number) : undefined,
    };
  }

  return {
    /**
     * One page in the given order; with `after`, strictly after that (updatedAt, id) position (and with `through`, up to that one)
     * (keyset paging: deep pages cost what the first one does). A row is `settled` when it lies
     * before `horizon` (store/sync-horizon.ts), read before this call; null: nothing is.
     */
    async page<T = StoredListing>(
      filter: ListingFilter,
      sort: Sort,
      limit: number,
      offset: number,
      options: PageOptions<T>,
      tx: Queryable = db,
    ): Promise<PageRow<T>[]> {
      return (await readPage(filter, sort, limit, offset, options, false, tx)).rows;
    },

    /**
     * page() and count(). A total summed from the counters (a list without updatedSince, mine or
     * externalReference: the common page) rides on the page's rows, in one statement: one round
     * trip (on the embedded database one statement's fixed cost) instead of two, rows and total
     * from one snapshot; a page without rows asks for it alone. A count that reads listings may
     * take longer than the page, so it runs beside it, as two statements: the page never waits
     * for it, and each keeps its own statement timeout.
     */
    async pageWithTotal<T = StoredListing>(
      filter: ListingFilter,
      sort: Sort,
      limit: number,
      offset: number,
      options: PageOptions<T>,
      tx: Queryable = db,
    ): Promise<{ rows: PageRow<T>[]; total: number }> {
      if (!countedFromCounters(filter)) {
        const [{ rows }, total] = await Promise.all([
          readPage(filter, sort, limit, offset, options, false, tx),
          count(filter, tx),
        ]);
        return { rows, total };
      }
      const { rows, total } = await readPage(filter, sort, limit, offset, options, true, tx);
      return { rows, total: total ?? (await count(filter, tx)) };
    },

    /** totalItems of a list (countStatement says how), in a statement of its own. */
    count,

    /** One listing by id, if it is of the mode's data (a live id is unknown in test, and the reverse). */
    async get<T = StoredListing>(
      id: string,
      mode: Mode,
      projection: Projection<T> = STORED as unknown as Projection<T>,
      tx: Queryable = db,
    ): Promise<T | undefined> {
      const params: unknown[] = [id];
      const rows = await tx.query(
        'GetListing',
        `SELECT ${projection.columns} FROM listings l ${projection.joins ?? LISTING_JOINS}
         WHERE l.id = $1 AND ${modeSql(mode, params)}`,
        params,
      );
      return rows[0] ? projection.read(rows[0]) : undefined;
    },
  };
}

export type ListingReadStore = ReturnType<typeof listingReadStore>;
