import type { Db, Queryable } from './db.js';
import { listingBodySql, storedReadinessSql } from './listings/json.js';

/**
 * The image checks (migration 018, docs/images.md): one row per distinct image URL, claimed by
 * checkers under a lease, written back by the claim that holds it. The rows are made by the
 * listings' own writes (a trigger, in the writing transaction); this module claims and records.
 */

/** What a checker needs of a claimed URL: its last result, for the schedule and the "same result" test. */
export interface ClaimedCheck {
  url: string;
  state: string;
  checkedAt: Date | null;
  failures: number;
  format: string | null;
  width: number | null;
  height: number | null;
  bytes: number | null;
  contentType: string | null;
  problemCode: string | null;
  problemMessage: string | null;
  /** Whether any listing still uses the URL; an unused one is not fetched. */
  used: boolean;
}

/** A finished check to record. */
export interface CheckResult {
  state: string;
  format: string | null;
  width: number | null;
  height: number | null;
  bytes: number | null;
  contentType: string | null;
  problemCode: string | null;
  problemMessage: string | null;
  checkedAt: Date;
  failures: number;
  nextCheckAt: Date;
}

/** What recording a result did: whether what partners see of the image changed, and from what. */
export interface Recorded {
  recorded: boolean;
  changed: boolean;
  previousState: string | null;
}

const CLAIM_SQL = `UPDATE image_checks c
   SET leased_by = $1, lease_until = clock_timestamp() + make_interval(secs => $2::float8),
     next_check_at = clock_timestamp() + make_interval(secs => $2::float8), attempts = c.attempts + 1
   WHERE c.url IN (
     SELECT d.url FROM image_checks d WHERE d.next_check_at <= clock_timestamp()
     ORDER BY d.next_check_at LIMIT $3
     FOR UPDATE SKIP LOCKED)
   RETURNING c.url, c.state, c.checked_at, c.failures, c.format, c.width, c.height, c.bytes,
     c.content_type, c.problem_code, c.problem_message,
     EXISTS (SELECT 1 FROM listing_images li WHERE li.url = c.url) AS used`;

// The result is written only by the claim that holds the URL: a lease that lapsed and was taken
// by another instance (or another batch of this one) leaves its late result unwritten.
// checked_at is when this result was first found: a re-check that finds the same keeps it.
const RECORD_SQL = `WITH before AS (
     SELECT url, state, format, width, height, bytes, content_type, problem_code, problem_message
     FROM image_checks WHERE url = $1 AND leased_by = $2 FOR UPDATE
   ), after AS (
     UPDATE image_checks c SET
       state = $3, format = $4, width = $5, height = $6, bytes = $7, content_type = $8,
       problem_code = $9, problem_message = $10,
       checked_at = CASE WHEN same.yes THEN c.checked_at ELSE $11::timestamptz END,
       last_checked_at = $11::timestamptz, failures = $12, next_check_at = $13::timestamptz,
       state_changed_at = CASE WHEN c.state = $3 THEN c.state_changed_at ELSE write_stamp() END,
       leased_by = NULL, lease_until = NULL
     FROM before b, LATERAL (SELECT (b.state, b.format, b.width, b.height, b.bytes, b.content_type, b.problem_code, b.problem_message)
       IS NOT DISTINCT FROM ($3::text, $4::text, $5::int, $6::int, $7::bigint, $8::text, $9::text, $10::text) AS yes) same
     WHERE c.url = b.url
     RETURNING NOT same.yes AS changed
   )
   SELECT a.changed, b.state AS previous_state FROM after a, before b`;

/** The readiness object at the end of a listing's stored text (json.ts: the body's last key). */
const READINESS = storedReadinessSql('l');

// The listings that use the URL, locked in id order (as recordEvents locks them), with their
// readiness before. Then, in a statement of its own, their stored text rewritten: its snapshot is
// taken after the locks are held, so it sees the result of any other check of the same listing
// that committed while this one waited (one statement would rewrite from the older snapshot and
// undo that result).
const LOCK_SQL = `SELECT l.id, ${READINESS} AS before
   FROM listings l JOIN listing_images li ON li.listing_id = l.id
   WHERE li.url = $1 ORDER BY l.id FOR NO KEY UPDATE OF l`;
const REWRITE_SQL = `UPDATE listings l SET read_json = ${listingBodySql()}
   WHERE l.id = ANY($1::uuid[])
   RETURNING l.id, ${READINESS} AS after`;

/** A listing whose stored text a result rewrote, with its readiness (JSON text) before and after. */
export interface RewrittenListing {
  id: string;
  before: string | null;
  after: string | null;
}

/**
 * Rewrites, in `tx`, the stored text of every listing that uses `url` (its check just changed).
 * The partner's `updatedAt` does not move: a check is not the partner's edit.
 */
export async function rewriteListingsOfImage(tx: Queryable, url: string): Promise<RewrittenListing[]> {
  const locked = await tx.query<{ id: string; before: string | null }>('LockListingsOfImage', LOCK_SQL, [
    url,
  ]);
  if (locked.length === 0) return [];
  const rows = await tx.query<{ id: string; after: string | null }>('RewriteListingsOfImage', REWRITE_SQL, [
    locked.map((l) => l.id),
  ]);
  const after = new Map(rows.map((r) => [r.id, r.after]));
  return locked.map((l) => ({ id: l.id, before: l.before, after: after.get(l.id) ?? null }));
}

/**
 * Rewrites, in `tx`, the stored text of the listings using `url` whose text differs from a fresh
 * build: a write that rendered the image's previous result while the result committed (its
 * statement's snapshot was older) is set right. Returns the listings it rewrote, each with its
 * readiness before and after (a changed one is an event: results.ts).
 */
export async function rerenderListingsOfImage(tx: Queryable, url: string): Promise<RewrittenListing[]> {
  const locked = await tx.query<{ id: string; before: string | null }>('LockListingsOfImage', LOCK_SQL, [
    url,
  ]);
  if (locked.length === 0) return [];
  const body = listingBodySql();
  const rows = await tx.query<{ id: string; after: string | null }>(
    'RerenderListingsOfImage',
    `UPDATE listings l SET read_json = ${body}
     WHERE l.id = ANY($1::uuid[]) AND l.read_json IS DISTINCT FROM ${body}
     RETURNING l.id, ${READINESS} AS after`,
    [locked.map((l) => l.id)],
  );
  const before = new Map(locked.map((l) => [l.id, l.before]));
  return rows.map((r) => ({ id: r.id, before: before.get(r.id) ?? null, after: r.after }));
}

export function imageCheckStore(db: Db) {
  return {
    /**
     * Claims up to `limit` due URLs for `owner` (one claim's name) for `leaseMs`. SKIP LOCKED:
     * instances claiming at the same moment take different URLs, and a URL under a lease is not
     * due until the lease ends, so no URL is checked twice at once.
     */
    async claim(owner: string, leaseMs: number, limit: number): Promise<ClaimedCheck[]> {
      const rows = await db.query('ClaimImageChecks', CLAIM_SQL, [owner, leaseMs / 1000, limit]);
      return rows.map((r) => ({
        url: r.url as string,
        state: r.state as string,
        checkedAt: r.checked_at ? new Date(r.checked_at as string) : null,
        failures: Number(r.failures),
        format: (r.format as string | null) ?? null,
        width: (r.width as number | null) ?? null,
        height: (r.height as number | null) ?? null,
        bytes: r.bytes === null || r.bytes === undefined ? null : Number(r.bytes),
        contentType: (r.content_type as string | null) ?? null,
        problemCode: (r.problem_code as string | null) ?? null,
        problemMessage: (r.problem_message as string | null) ?? null,
        used: r.used as boolean,
      }));
    },

    /** Gives URLs back without a result, due at `dueAt` (a host over its limit, an abandoned check). */
    async release(owner: string, urls: readonly string[], dueAt: Date): Promise<void> {
      if (urls.length === 0) return;
      await db.query(
        'ReleaseImageChecks',
        `UPDATE image_checks SET leased_by = NULL, lease_until = NULL, next_check_at = $3
         WHERE url = ANY($2::text[]) AND leased_by = $1`,
        [owner, urls, dueAt],
      );
    },

    /**
     * Records a result in `tx` (the caller's transaction, where what the result changes for
     * listings is written too). Not recorded when the claim no longer holds the URL.
     */
    async record(tx: Queryable, owner: string, url: string, result: CheckResult): Promise<Recorded> {
      const rows = await tx.query<{ changed: boolean; previous_state: string }>(
        'RecordImageCheck',
        RECORD_SQL,
        [
          url,
          owner,
          result.state,
          result.format,
          result.width,
          result.height,
          result.bytes,
          result.contentType,
          result.problemCode,
          result.problemMessage,
          result.checkedAt,
          result.failures,
          result.nextCheckAt,
        ],
      );
      const row = rows[0];
      if (!row) return { recorded: false, changed: false, previousState: null };
      return { recorded: true, changed: row.changed, previousState: row.previous_state };
    },

    /** URLs due now (the queue's depth, for metrics). */
    async dueCount(): Promise<number> {
      const rows = await db.query<{ n: string }>(
        'CountDueImageChecks',
        'SELECT count(*) AS n FROM image_checks WHERE next_check_at <= clock_timestamp()',
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}

export type ImageCheckStore = ReturnType<typeof imageCheckStore>;
