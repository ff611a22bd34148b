import type { Projection, Queryable } from '../db.js';
import { LISTING_FIELDS, type ListingFieldName } from './columns.js';
import { type ListingSource, listingBodySql, listingTailSql, storedReadinessSql } from './json.js';
import type { Owner } from './mode.js';
import { LISTING_JOINS } from './rows.js';

const SQL_TYPE = {
  text: 'text',
  numeric: 'numeric',
  int: 'integer',
  date: 'date',
  bool: 'boolean',
  'text[]': 'text[]',
  float8: 'double precision',
  jsonb: 'jsonb',
} as const;

/** One row to write: resolved dealer and status, every writable field. */
export interface ListingRow {
  id: string;
  reference: string;
  slug: string;
  dealerProfileId: string;
  status: string;
  /** false: the body named no status / no dealer, so an existing listing keeps its own. */
  statusGiven: boolean;
  dealerGiven: boolean;
  values: Record<ListingFieldName, unknown>;
  /**
   * An existing listing's status and dealer as the writer locked them: its update is recorded in
   * the status history when either changes. A row without one counts as moved (a new listing).
   */
  previous?: { status: string; dealerProfileId: string } | undefined;
}

export interface ExistingListing {
  id: string;
  reference: string;
  dealerProfileId: string;
  status: string;
  /**
   * Its readiness as stored (JSON text, docs/images.md "Readiness"), read by the lock: the `from`
   * of the readiness event a write records when it changes it. Null when the text holds none.
   */
  readiness?: string | null;
}

export interface WrittenListing {
  id: string;
  reference: string;
  status: string;
  dealerProfileId: string;
  /** An updated listing's readiness as written (JSON text); absent for a new or unchanged one. */
  readiness?: string | null;
}

/** What a write returns of each listing with `version`: the listing as that projection reads it. */
export interface Versioned<T> {
  version?: Projection<T> | undefined;
}

const COLUMNS = LISTING_FIELDS.map(([, column]) => column);

// The batch travels as one jsonb parameter and is unpacked by jsonb_to_recordset: one statement
// for any number of rows, the same on PostgreSQL and PGlite.
const RECORDSET = `jsonb_to_recordset($2::jsonb) AS x(
  id uuid, reference text, slug text, dealer_profile_id uuid, status text, status_given boolean, dealer_given boolean,
  prev_status text, prev_dealer_profile_id uuid,
  ${LISTING_FIELDS.map(([, column, kind]) => `${column} ${SQL_TYPE[kind]}`).join(', ')})`;

// Each field's `,"column":` written once. A null or absent value is left out of the row: the
// recordset reads a missing key as NULL, and a feed's many empty fields then cost neither
// serializing nor the database's parsing (a third of a typical batch's bytes).
const FIELD_KEYS = LISTING_FIELDS.map(([field, column]) => [field, `,${JSON.stringify(column)}:`] as const);

/** The batch as the JSON array the recordset unpacks, written as text in one pass. */
function toJson(rows: readonly ListingRow[]): string {
  let json = '[';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    json += `${i ? ',' : ''}{"id":${JSON.stringify(row.id)},"reference":${JSON.stringify(row.reference)},"slug":${JSON.stringify(row.slug)},"dealer_profile_id":${JSON.stringify(row.dealerProfileId)},"status":${JSON.stringify(row.status)},"status_given":${row.statusGiven},"dealer_given":${row.dealerGiven}`;
    if (row.previous) {
      json += `,"prev_status":${JSON.stringify(row.previous.status)},"prev_dealer_profile_id":${JSON.stringify(row.previous.dealerProfileId)}`;
    }
    for (const [field, key] of FIELD_KEYS) {
      const value = row.values[field];
      if (value !== null && value !== undefined) json += key + JSON.stringify(value);
    }
    json += '}';
  }
  return `${json}]`;
}

// Every time a write records is write_stamp(), not now(): one instant per transaction, taken only
// after the transaction is visible as a writer, which is what lets sync cursors settle on the
// writers still open (migration 005, docs/sync.md). An update's updatedAt is next_updated_at():
// that instant, or just after the version it replaces when that is later (a lock wait).
const NEW_STATUS = 'CASE WHEN x.status_given THEN x.status ELSE l.status END';
const NEW_DEALER = 'CASE WHEN x.dealer_given THEN x.dealer_profile_id ELSE l.dealer_profile_id END';
const NEW_SOLD_AT = `CASE WHEN ${NEW_STATUS} = 'sold' THEN coalesce(l.sold_at, write_stamp()) END`;
const STATUS_SOLD_AT = `CASE WHEN $3 = 'sold' THEN coalesce(l.sold_at, write_stamp()) END`;
// next_updated_at() gives the same instant each time within a transaction for the same previous
// value, so the read text's updatedAt, computed by a second call, is the one the row gets.
const NEXT_UPDATED_AT = 'next_updated_at(l.updated_at)';
/**
 * An updated row's readiness as its new text has it (RETURNING sees the new row): with the one
 * its lock read, what tells the writer whether to record a readiness event (docs/webhooks.md).
 */
const READINESS = storedReadinessSql('l');

/**
 * The read model's text (migration 011) is written by the statement that writes the row, from
 * the values it writes, set-based: the row trigger then has nothing to do (it fills only what a
 * writer left out, for plain SQL). Each source maps a column to the value its statement writes.
 */
const insertSource: ListingSource = (c) =>
  c === 'created_at' || c === 'updated_at'
    ? 'write_stamp()'
    : c === 'sold_at'
      ? "CASE WHEN x.status = 'sold' THEN write_stamp() END"
      : `x.${c}`;
const updateSource: ListingSource = (c) =>
  ({ status: NEW_STATUS, sold_at: NEW_SOLD_AT, updated_at: NEXT_UPDATED_AT, created_at: 'l.created_at' })[
    c
  ] ?? `x.${c}`;
const statusSource: ListingSource = (c) =>
  ({ status: '$3::text', sold_at: STATUS_SOLD_AT, updated_at: NEXT_UPDATED_AT })[c] ?? `l.${c}`;

async function existing(
  tx: Queryable,
  owner: Owner,
  references: readonly string[],
  lock: boolean,
): Promise<ExistingListing[]> {
  if (references.length === 0) return [];
  return tx.query<ExistingListing>(
    lock ? 'LockListings' : 'FindListings',
    `SELECT id, external_reference AS reference, dealer_profile_id AS "dealerProfileId", status,
            ${storedReadinessSql()} AS readiness
     FROM listings l WHERE partner_id = $1 AND test = $3 AND external_reference = ANY($2::text[])
     ORDER BY external_reference${lock ? ' FOR UPDATE' : ''}`,
    [owner.partnerId, references, owner.test],
  );
}

/** Who each written listing is, as every write answers; `l` is the written row. */
const WRITTEN = `l.id, l.external_reference AS reference, l.status, l.dealer_profile_id AS "dealerProfileId"`;

/**
 * The status history's row of each listing in `from` (a write's rows) that entered a status or
 * moved dealer: a data-modifying CTE of the write's own statement, not a statement of its own.
 * Live listings only: the history is the live locations' statistics (test listings have none).
 */
const history = (owner: Owner, from: string, where = '') =>
  owner.test
    ? 'SELECT 1'
    : `INSERT INTO listing_status_history (listing_id, dealer_profile_id, status, changed_at)
     SELECT id, dealer_profile_id, status, write_stamp() FROM ${from}${where}`;

/** The answer's columns for rows `l`: who they are and, with a projection, the listing as it reads them. */
const answer = (version: Projection<unknown> | undefined) =>
  version ? `${WRITTEN}, ${version.columns}` : WRITTEN;
/** What the answer joins to `l` for the projection's columns. */
const joins = (version: Projection<unknown> | undefined) =>
  version ? ` ${version.joins ?? LISTING_JOINS}` : '';

/** A written row as the store returns it, with its version read by the projection when asked. */
function written<T>(row: Record<string, unknown>, version: Projection<T> | undefined) {
  const listing: WrittenListing & { version?: T } = {
    id: row.id as string,
    reference: row.reference as string,
    status: row.status as string,
    dealerProfileId: row.dealerProfileId as string,
  };
  if (row.readiness !== undefined) listing.readiness = row.readiness as string | null;
  if (version) listing.version = version.read(row);
  return listing;
}

/** Writes listings with their read model's text, in the read shape's order (json.ts). */
export function listingWriteStore(db: Queryable) {
  // Built once: each is a few kilobytes of SQL.
  const insertText = `${listingBodySql(insertSource)}, ${listingTailSql(insertSource)}`;
  const setText = (src: ListingSource) =>
    `read_json = ${listingBodySql(src)}, read_json_tail = ${listingTailSql(src)}`;
  const updateText = setText(updateSource);
  const statusText = setText(statusSource);
  // A write that answers with versions returns every column (the projection reads what it needs);
  // otherwise only what WRITTEN names.
  const returning = (version: Projection<unknown> | undefined) =>
    version ? 'l.*' : 'l.id, l.external_reference, l.status, l.dealer_profile_id';
  return {
    /**
     * Locks this partner's listings with these references for the rest of the transaction, in a
     * fixed order so that two overlapping batches cannot deadlock each other.
     */
    async lockExisting(
      owner: Owner,
      references: readonly string[],
      tx: Queryable = db,
    ): Promise<ExistingListing[]> {
      return existing(tx, owner, references, true);
    },

    /**
     * One listing of this partner as a projection reads it (the JSON a GET shows, whose hash is its
     * ETag). Inside a write's transaction, after its lock, this is the version the write replaces.
     */
    async readOne<T>(
      owner: Owner,
      reference: string,
      projection: Projection<T>,
      tx: Queryable = db,
    ): Promise<T | undefined> {
      const rows = await tx.query(
        'ReadListingByReference',
        `SELECT ${projection.columns} FROM listings l ${projection.joins ?? LISTING_JOINS}
         WHERE l.partner_id = $1 AND l.test = $3 AND l.external_reference = $2`,
        [owner.partnerId, reference, owner.test],
      );
      return rows[0] ? projection.read(rows[0]) : undefined;
    },

    /**
     * The same look-up without locks: for answering refused items, which write nothing, and, inside
     * a batch's transaction, for a look at what committed since its locks were taken.
     */
    async findExisting(
      owner: Owner,
      references: readonly string[],
      tx: Queryable = db,
    ): Promise<ExistingListing[]> {
      return existing(tx, owner, references, false);
    },

    /**
     * Inserts the rows whose reference is new, each with its first status in the status history,
     * in one statement; a reference another transaction just created is skipped. createdAt and
     * updatedAt are write_stamp() (migration 005). With `version`, each inserted listing comes
     * back as that projection reads it.
     */
    async insertNew<T = never>(
      owner: Owner,
      rows: readonly ListingRow[],
      tx: Queryable = db,
      { version }: Versioned<T> = {},
    ): Promise<(WrittenListing & { version?: T })[]> {
      if (rows.length === 0) return [];
      const found = await tx.query(
        'InsertListings',
        `WITH w AS (
           INSERT INTO listings AS l (id, partner_id, test, external_reference, slug, dealer_profile_id, status, sold_at,
             created_at, updated_at, read_json, read_json_tail, ${COLUMNS.join(', ')})
           SELECT x.id, $1, $3, x.reference, x.slug, x.dealer_profile_id, x.status, ${insertSource('sold_at')},
                  write_stamp(), write_stamp(), ${insertText}, ${COLUMNS.map((c) => `x.${c}`).join(', ')}
           FROM ${RECORDSET}
           ORDER BY x.reference
           ON CONFLICT (partner_id, test, external_reference) DO NOTHING
           RETURNING ${returning(version)}
         ), h AS (${history(owner, 'w')})
         SELECT ${answer(version)} FROM w l${joins(version)}`,
        [owner.partnerId, toJson(rows), owner.test],
      );
      return found.map((row) => written(row, version));
    },

    /**
     * Replaces the content of existing listings, but only where it differs: the comparison runs
     * in the database, so a resent feed changes no row and no updatedAt. A row whose status or
     * dealer differs from its `previous` gets its status history row in the same statement.
     * Returns the changed rows (`changed`); with `version`, every row of `rows` that exists, the
     * unchanged ones too, each as that projection reads it.
     */
    async updateChanged<T = never>(
      owner: Owner,
      rows: readonly ListingRow[],
      tx: Queryable = db,
      { version }: Versioned<T> = {},
    ): Promise<(WrittenListing & { changed: boolean; version?: T })[]> {
      if (rows.length === 0) return [];
      // The unchanged rows, by id (a row's id is its listing's), as the statement's snapshot has
      // them: the writer holds their locks. Skipped at once when every row changed.
      const unchanged = version
        ? `UNION ALL
           SELECT ${answer(version)}, NULL::text AS readiness, false AS changed FROM listings l${joins(version)}
           WHERE l.id = ANY($4::uuid[]) AND l.id NOT IN (SELECT id FROM w)
             AND (SELECT count(*) FROM w) < cardinality($4::uuid[])`
        : '';
      const found = await tx.query(
        'UpdateListings',
        `WITH w AS (
           UPDATE listings l SET
             status = ${NEW_STATUS},
             dealer_profile_id = ${NEW_DEALER},
             sold_at = ${NEW_SOLD_AT},
             ${COLUMNS.map((c) => `${c} = x.${c}`).join(',\n             ')},
             updated_at = ${NEXT_UPDATED_AT},
             ${updateText}
           FROM ${RECORDSET}
           WHERE l.partner_id = $1 AND l.test = $3 AND l.external_reference = x.reference
             AND (l.status, l.dealer_profile_id, ${COLUMNS.map((c) => `l.${c}`).join(', ')})
                 IS DISTINCT FROM (${NEW_STATUS}, ${NEW_DEALER}, ${COLUMNS.map((c) => `x.${c}`).join(', ')})
           RETURNING ${returning(version)}, ${READINESS} AS readiness,
             (x.prev_status, x.prev_dealer_profile_id) IS DISTINCT FROM (l.status, l.dealer_profile_id) AS moved
         ), h AS (${history(owner, 'w', ' WHERE moved')})
         SELECT ${answer(version)}, l.readiness, true AS changed FROM w l${joins(version)}
         ${unchanged}`,
        version
          ? [owner.partnerId, toJson(rows), owner.test, rows.map((r) => r.id)]
          : [owner.partnerId, toJson(rows), owner.test],
      );
      return found.map((row) => ({ ...written(row, version), changed: row.changed as boolean }));
    },

    /**
     * Moves one listing to a status, with its status history row, in one statement. `written`:
     * the listing changed, undefined when it already had that status. With `version`, the listing
     * as that projection reads it (changed or not); undefined when there is no such listing.
     */
    async setStatus<T = never>(
      owner: Owner,
      reference: string,
      status: string,
      tx: Queryable = db,
      { version }: Versioned<T> = {},
    ): Promise<{ written: WrittenListing | undefined; version: T | undefined }> {
      const unchanged = version
        ? `UNION ALL
           SELECT ${answer(version)}, NULL::text AS readiness, false AS changed FROM listings l${joins(version)}
           WHERE l.partner_id = $1 AND l.test = $4 AND l.external_reference = $2 AND NOT EXISTS (SELECT 1 FROM w)`
        : '';
      const rows = await tx.query(
        'SetListingStatus',
        `WITH w AS (
           UPDATE listings l SET status = $3, sold_at = ${STATUS_SOLD_AT}, updated_at = ${NEXT_UPDATED_AT},
             ${statusText}
           WHERE partner_id = $1 AND test = $4 AND external_reference = $2 AND status <> $3
           RETURNING ${returning(version)}, ${READINESS} AS readiness
         ), h AS (${history(owner, 'w')})
         SELECT ${answer(version)}, l.readiness, true AS changed FROM w l${joins(version)}
         ${unchanged}`,
        [owner.partnerId, reference, status, owner.test],
      );
      const row = rows[0];
      if (!row) return { written: undefined, version: undefined };
      const listing = written(row, version);
      const { version: read, ...who } = listing;
      return { written: row.changed ? who : undefined, version: read };
    },
  };
}

export type ListingWriteStore = ReturnType<typeof listingWriteStore>;
