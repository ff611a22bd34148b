import type { Queryable } from './db.js';

/** Requests no partner could be identified for are counted under this id in partner_usage. */
export const NO_PARTNER = '00000000-0000-0000-0000-000000000000';

export type KeyState = 'current' | 'previous' | 'retired';

export interface FailureInput {
  at: string;
  requestId: string;
  partnerId: string | null;
  key: KeyState | null;
  /** Made with a test secret (docs/test-mode.md). */
  test: boolean;
  method: string;
  route: string;
  /** The listing the path named, when the route has one (absent: none). */
  listing?: string | null;
  status: number;
  code: string | null;
  message: string | null;
  issues: { path: string; message: string; code: string }[];
  issueCount: number;
  durationMs: number;
}

export interface FailureRecord extends FailureInput {
  /** Row id: the order of arrival, and the cursor's position. */
  id: string;
  partnerName: string | null;
}

/** The counts kept per partner and minute, in the order the views list them. */
export const USAGE_COUNTS = [
  'requests',
  'clientErrors',
  'serverErrors',
  'rateLimited',
  'itemsWritten',
  'itemsFailed',
  'failuresNotKept',
  'previousKeyRequests',
  'retiredKeyRequests',
] as const;
type UsageCounts = Record<(typeof USAGE_COUNTS)[number], number>;
export const noUsage = (): UsageCounts =>
  Object.fromEntries(USAGE_COUNTS.map((name) => [name, 0])) as UsageCounts;

export interface UsageInput extends UsageCounts {
  partnerId: string;
  minute: string;
  /** Requests made with a test secret, counted apart from live ones (migration 028). */
  test: boolean;
}

/**
 * Requests of one partner authenticated with one state of its secrets since one rotation (the
 * partner's secretRotatedAt then; null: before any): how many, and the first and last of them.
 */
export interface KeyUseInput {
  partnerId: string;
  rotatedAt: string | null;
  key: KeyState;
  requests: number;
  firstAt: string;
  lastAt: string;
}

/** What a partner did in test mode (migration 032): the signs that it is ready to go live. */
export const TEST_ACTIVITIES = ['write', 'read', 'sync', 'events', 'webhook'] as const;
export type TestActivity = (typeof TEST_ACTIVITIES)[number];
/** Successful test requests of one activity of one partner: how many, the first and the last. */
export interface TestUseInput {
  partnerId: string;
  activity: Exclude<TestActivity, 'webhook'>;
  requests: number;
  firstAt: string;
  lastAt: string;
}
export interface TestUseRecord {
  activity: TestActivity;
  count: number;
  firstAt: string;
  lastAt: string;
}

/** A partner's key use as kept (store/partners.ts reads the same rows for "last used"). */
export interface KeyUseRecord extends Omit<KeyUseInput, 'partnerId'> {}

export interface FailureFilter {
  /** undefined: every partner's (the operator's view); null: requests with no partner. */
  partnerId?: string | null;
  status?: { min: number; max: number };
  code?: string;
  since?: string;
  /** Before this instant (exclusive). */
  until?: string;
  /** The route as recorded (/listings/{listing}), exactly. */
  route?: string;
  /** The secret sent; null: none identified the partner. */
  key?: KeyState | null;
  requestId?: string;
  /** Only requests of this mode (a partner reads its own mode's); undefined: both (the operator). */
  test?: boolean;
}

const FAILURE_COLUMNS = `f.id::text AS id, f.at, f.request_id, f.partner_id, p.name AS partner_name, f.key, f.test,
  f.method, f.route, f.listing, f.status, f.code, f.message, f.issues, f.issue_count, f.duration_ms`;

function toFailure(row: Record<string, unknown>): FailureRecord {
  return {
    id: row.id as string,
    at: (row.at as Date).toISOString(),
    requestId: row.request_id as string,
    partnerId: (row.partner_id as string | null) ?? null,
    partnerName: (row.partner_name as string | null) ?? null,
    key: (row.key as KeyState | null) ?? null,
    test: row.test as boolean,
    method: row.method as string,
    route: row.route as string,
    listing: (row.listing as string | null) ?? null,
    status: Number(row.status),
    code: (row.code as string | null) ?? null,
    message: (row.message as string | null) ?? null,
    issues: row.issues as FailureInput['issues'],
    issueCount: Number(row.issue_count),
    durationMs: Number(row.duration_ms),
  };
}

/** Failed requests and per-minute usage: written in batches, read newest first, deleted by age. */
export function requestRecordStore(db: Queryable) {
  return {
    /**
     * One statement, one round trip, for a whole batch: the failures inserted, the minute counts
     * and the key use added to what other instances (or earlier batches) counted. All land or none.
     */
    async write(
      failures: FailureInput[],
      usage: UsageInput[],
      keyUse: KeyUseInput[] = [],
      testUse: TestUseInput[] = [],
    ): Promise<void> {
      if (!failures.length && !usage.length && !keyUse.length && !testUse.length) return;
      await db.query(
        'WriteRequestRecords',
        `WITH tried AS (
           INSERT INTO partner_test_use AS t (partner_id, activity, requests, first_at, last_at)
           SELECT r."partnerId", r.activity, r.requests, r."firstAt", r."lastAt"
           FROM jsonb_to_recordset($4::jsonb) AS r("partnerId" uuid, activity text, requests bigint,
             "firstAt" timestamptz, "lastAt" timestamptz)
           ON CONFLICT (partner_id, activity) DO UPDATE SET
             requests = t.requests + excluded.requests,
             first_at = least(t.first_at, excluded.first_at),
             last_at = greatest(t.last_at, excluded.last_at)
           RETURNING 1
         ),
         keys AS (
           INSERT INTO partner_key_use AS k (partner_id, rotated_at, key, requests, first_at, last_at)
           SELECT r."partnerId", coalesce(r."rotatedAt", '-infinity'), r.key, r.requests, r."firstAt", r."lastAt"
           FROM jsonb_to_recordset($3::jsonb) AS r("partnerId" uuid, "rotatedAt" timestamptz, key text,
             requests bigint, "firstAt" timestamptz, "lastAt" timestamptz)
           ON CONFLICT (partner_id, rotated_at, key) DO UPDATE SET
             requests = k.requests + excluded.requests,
             first_at = least(k.first_at, excluded.first_at),
             last_at = greatest(k.last_at, excluded.last_at)
           RETURNING 1
         ),
         failures AS (
           INSERT INTO request_failures
             (at, request_id, partner_id, key, test, method, route, listing, status, code, message, issues,
              issue_count, duration_ms)
           SELECT r.at, r."requestId", r."partnerId", r.key, coalesce(r.test, false), r.method, r.route, r.listing,
                  r.status, r.code, r.message, coalesce(r.issues, '[]'::jsonb), r."issueCount", r."durationMs"
           FROM jsonb_to_recordset($1::jsonb) AS r(at timestamptz, "requestId" text, "partnerId" uuid, key text,
             test boolean, method text, route text, listing text, status smallint, code text, message text,
             issues jsonb, "issueCount" integer, "durationMs" real)
           RETURNING 1
         )
         INSERT INTO partner_usage AS u
           (partner_id, minute, test, requests, client_errors, server_errors, rate_limited, items_written,
            items_failed, failures_not_kept, previous_key_requests, retired_key_requests)
         SELECT r."partnerId", r.minute, coalesce(r.test, false), r.requests, r."clientErrors", r."serverErrors", r."rateLimited",
                r."itemsWritten", r."itemsFailed", r."failuresNotKept", r."previousKeyRequests",
                r."retiredKeyRequests"
         FROM jsonb_to_recordset($2::jsonb) AS r("partnerId" uuid, minute timestamptz, test boolean, requests integer,
           "clientErrors" integer, "serverErrors" integer, "rateLimited" integer, "itemsWritten" integer,
           "itemsFailed" integer, "failuresNotKept" integer, "previousKeyRequests" integer,
           "retiredKeyRequests" integer)
         ON CONFLICT (partner_id, minute, test) DO UPDATE SET
           requests = u.requests + excluded.requests,
           client_errors = u.client_errors + excluded.client_errors,
           server_errors = u.server_errors + excluded.server_errors,
           rate_limited = u.rate_limited + excluded.rate_limited,
           items_written = u.items_written + excluded.items_written,
           items_failed = u.items_failed + excluded.items_failed,
           failures_not_kept = u.failures_not_kept + excluded.failures_not_kept,
           previous_key_requests = u.previous_key_requests + excluded.previous_key_requests,
           retired_key_requests = u.retired_key_requests + excluded.retired_key_requests`,
        [JSON.stringify(failures), JSON.stringify(usage), JSON.stringify(keyUse), JSON.stringify(testUse)],
      );
    },

    /**
     * What a partner has tried in test mode (one record per activity it did) and how many test
     * listings it holds now; undefined when there is no such partner.
     */
    async testUse(partnerId: string): Promise<{ tried: TestUseRecord[]; testListings: number } | undefined> {
      const rows = await db.query(
        'PartnerTestUse',
        // The count is an index-only scan of listings_test_count_idx (migration 031).
        `SELECT u.activity, u.requests, u.first_at, u.last_at,
                (SELECT count(*) FROM listings WHERE test AND partner_id = p.id)::int AS listings
         FROM partners p LEFT JOIN partner_test_use u ON u.partner_id = p.id
         WHERE p.id = $1`,
        [partnerId],
      );
      if (rows.length === 0) return undefined;
      return {
        testListings: Number(rows[0]!.listings),
        tried: rows
          .filter((row) => row.activity !== null)
          .map((row) => ({
            activity: row.activity as TestActivity,
            count: Number(row.requests),
            firstAt: (row.first_at as Date).toISOString(),
            lastAt: (row.last_at as Date).toISOString(),
          })),
      };
    },

    /**
     * The key use of some partners, by rotation and secret state (their latest rotation's rows
     * say whether each moved to its new secret: domain/rotation.ts).
     */
    async keyUse(partnerIds: string[]): Promise<Map<string, KeyUseRecord[]>> {
      const out = new Map<string, KeyUseRecord[]>();
      if (!partnerIds.length) return out;
      const rows = await db.query(
        'PartnerKeyUse',
        `SELECT partner_id, CASE WHEN rotated_at = '-infinity' THEN NULL ELSE rotated_at END AS rotated_at,
                key, requests, first_at, last_at
         FROM partner_key_use WHERE partner_id = ANY($1::uuid[]) ORDER BY partner_id, rotated_at, key`,
        [partnerIds],
      );
      for (const row of rows) {
        const list = out.get(row.partner_id as string) ?? [];
        list.push({
          rotatedAt: row.rotated_at ? (row.rotated_at as Date).toISOString() : null,
          key: row.key as KeyState,
          requests: Number(row.requests),
          firstAt: (row.first_at as Date).toISOString(),
          lastAt: (row.last_at as Date).toISOString(),
        });
        out.set(row.partner_id as string, list);
      }
      return out;
    },

    /**
     * Per partner since a time: live requests, errors, and requests with a retired secret (with
     * the minute of the last of them): what the overview's "needs attention" reads. Test secrets'
     * requests are left out: a partner trying things in test mode is not an incident.
     */
    async perPartner(since: string) {
      const rows = await db.query(
        'UsagePerPartner',
        `SELECT partner_id, sum(requests)::bigint AS requests, sum(client_errors)::bigint AS client_errors,
                sum(server_errors)::bigint AS server_errors, sum(retired_key_requests)::bigint AS retired,
                max(minute) FILTER (WHERE retired_key_requests > 0) AS last_retired
         FROM partner_usage WHERE minute >= $1::timestamptz AND partner_id <> $2 AND NOT test
         GROUP BY partner_id`,
        [since, NO_PARTNER],
      );
      return rows.map((row) => ({
        partnerId: row.partner_id as string,
        requests: Number(row.requests),
        errors: Number(row.client_errors) + Number(row.server_errors),
        retiredKeyRequests: Number(row.retired),
        lastRetiredMinute: row.last_retired ? (row.last_retired as Date).toISOString() : null,
      }));
    },

    /** Newest first, after (older than) the row id `before`. */
    async failures(filter: FailureFilter, limit: number, before: string | null): Promise<FailureRecord[]> {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (sql: (p: string) => string, value: unknown) => {
        params.push(value);
        where.push(sql(`$${params.length}`));
      };
      if (filter.partnerId === null) where.push('f.partner_id IS NULL');
      else if (filter.partnerId !== undefined) add((p) => `f.partner_id = ${p}`, filter.partnerId);
      if (filter.status) {
        add((p) => `f.status >= ${p}`, filter.status.min);
        add((p) => `f.status <= ${p}`, filter.status.max);
      }
      if (filter.code !== undefined) add((p) => `f.code = ${p}`, filter.code);
      if (filter.since !== undefined) add((p) => `f.at >= ${p}::timestamptz`, filter.since);
      if (filter.until !== undefined) add((p) => `f.at < ${p}::timestamptz`, filter.until);
      if (filter.route !== undefined) add((p) => `f.route = ${p}`, filter.route);
      if (filter.key === null) where.push('f.key IS NULL');
      else if (filter.key !== undefined) add((p) => `f.key = ${p}`, filter.key);
      if (filter.requestId !== undefined) add((p) => `f.request_id = ${p}`, filter.requestId);
      if (filter.test !== undefined) add((p) => `f.test = ${p}`, filter.test);
      if (before !== null) add((p) => `f.id < ${p}::bigint`, before);
      params.push(limit);
      const rows = await db.query(
        'ListRequestFailures',
        `SELECT ${FAILURE_COLUMNS} FROM request_failures f LEFT JOIN partners p ON p.id = f.partner_id
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY f.id DESC LIMIT $${params.length}`,
        params,
      );
      return rows.map(toFailure);
    },

    /**
     * Per-bucket sums over [since, now) for one partner (or NO_PARTNER); buckets of `bucketMinutes`,
     * aligned on multiples of it since the epoch, or from `since` when `fromSince`. Live requests,
     * or with `test` those made with a test secret: the two are counted apart.
     */
    async usage(partnerId: string, since: string, bucketMinutes: number, fromSince = false, test = false) {
      const origin = fromSince ? Date.parse(since) / 1000 : 0;
      const rows = await db.query(
        'PartnerUsage',
        `SELECT to_timestamp($4::double precision
                  + floor((extract(epoch FROM minute) - $4::double precision) / ($3 * 60)) * ($3 * 60)) AS bucket,
                sum(requests)::bigint AS requests, sum(client_errors)::bigint AS client_errors,
                sum(server_errors)::bigint AS server_errors, sum(rate_limited)::bigint AS rate_limited,
                sum(items_written)::bigint AS items_written, sum(items_failed)::bigint AS items_failed,
                sum(failures_not_kept)::bigint AS failures_not_kept,
                sum(previous_key_requests)::bigint AS previous_key_requests,
                sum(retired_key_requests)::bigint AS retired_key_requests
         FROM partner_usage WHERE partner_id = $1 AND minute >= $2::timestamptz AND test = $5
         GROUP BY bucket ORDER BY bucket`,
        [partnerId, since, bucketMinutes, origin, test],
      );
      return rows.map((row) => ({
        start: (row.bucket as Date).toISOString(),
        requests: Number(row.requests),
        clientErrors: Number(row.client_errors),
        serverErrors: Number(row.server_errors),
        rateLimited: Number(row.rate_limited),
        itemsWritten: Number(row.items_written),
        itemsFailed: Number(row.items_failed),
        failuresNotKept: Number(row.failures_not_kept),
        previousKeyRequests: Number(row.previous_key_requests),
        retiredKeyRequests: Number(row.retired_key_requests),
      }));
    },

    /**
     * Every partner's live requests per minute since a time, and how many partners sent any (the
     * overview's traffic: test secrets' requests are on each partner's page, apart).
     */
    async traffic(since: string) {
      const [minutes, partners] = await Promise.all([
        db.query(
          'TrafficPerMinute',
          `SELECT minute, sum(requests)::bigint AS requests, sum(client_errors)::bigint AS client_errors,
                  sum(server_errors)::bigint AS server_errors, sum(rate_limited)::bigint AS rate_limited
           FROM partner_usage WHERE minute >= $1::timestamptz AND NOT test GROUP BY minute ORDER BY minute`,
          [since],
        ),
        db.query<{ n: string }>(
          'ActivePartners',
          `SELECT count(DISTINCT partner_id)::text AS n FROM partner_usage
           WHERE minute >= $1::timestamptz AND partner_id <> $2 AND NOT test`,
          [since, NO_PARTNER],
        ),
      ]);
      return {
        minutes: minutes.map((row) => ({
          minute: (row.minute as Date).toISOString(),
          requests: Number(row.requests),
          clientErrors: Number(row.client_errors),
          serverErrors: Number(row.server_errors),
          rateLimited: Number(row.rate_limited),
        })),
        activePartners: Number(partners[0]?.n ?? 0),
      };
    },

    /**
     * Failures counted but not kept one by one (over the per-minute limit): of one partner, or of
     * every partner (undefined), since a time or over everything kept.
     */
    async notKept(
      partnerId: string | null | undefined,
      since: string | undefined,
      test: boolean | undefined,
    ): Promise<number> {
      const rows = await db.query<{ n: string }>(
        'FailuresNotKept',
        `SELECT coalesce(sum(failures_not_kept), 0)::text AS n FROM partner_usage
         WHERE ($1::uuid IS NULL OR partner_id = $1)
           AND ($2::timestamptz IS NULL OR minute >= date_trunc('minute', $2::timestamptz))
           AND ($3::boolean IS NULL OR test = $3)`,
        [partnerId === undefined ? null : (partnerId ?? NO_PARTNER), since ?? null, test ?? null],
      );
      return Number(rows[0]?.n ?? 0);
    },

    /** The most frequent error codes of a partner's failures since a time. */
    async topCodes(partnerId: string, since: string, limit: number, test = false) {
      const rows = await db.query(
        'TopErrorCodes',
        `SELECT coalesce(code, 'NONE') AS code, status, count(*)::bigint AS n
         FROM request_failures WHERE partner_id = $1 AND at >= $2::timestamptz AND test = $4
         GROUP BY code, status ORDER BY n DESC, code LIMIT $3`,
        [partnerId, since, limit, test],
      );
      return rows.map((row) => ({
        code: row.code as string,
        status: Number(row.status),
        count: Number(row.n),
      }));
    },

    /**
     * Deletes records older than `cutoff`, at most `limit` failures per call; how many went. Test
     * use is kept until `testUseCutoff` when that is earlier: test data's expiry reads it.
     */
    async deleteBefore(cutoff: string, limit: number, testUseCutoff: string = cutoff): Promise<number> {
      const failures = await db.query<{ n: string }>(
        'DeleteOldRequestFailures',
        // The oldest `limit` rows by id (the primary key's start), those of them past the cutoff:
        // a bounded read even when none is old. Ids follow arrival, so old rows come first.
        `WITH head AS (SELECT id, at FROM request_failures ORDER BY id LIMIT $2),
              gone AS (DELETE FROM request_failures f USING head
                       WHERE f.id = head.id AND head.at < $1::timestamptz RETURNING 1)
         SELECT count(*)::text AS n FROM gone`,
        [cutoff, limit],
      );
      await db.query('DeleteOldPartnerUsage', 'DELETE FROM partner_usage WHERE minute < $1::timestamptz', [
        cutoff,
      ]);
      await db.query('DeleteOldKeyUse', 'DELETE FROM partner_key_use WHERE last_at < $1::timestamptz', [
        cutoff,
      ]);
      await db.query(
        'DeleteOldTestUse',
        'DELETE FROM partner_test_use WHERE last_at < least($1::timestamptz, $2::timestamptz)',
        [cutoff, testUseCutoff],
      );
      return Number(failures[0]?.n ?? 0);
    },
  };
}

export type RequestRecordStore = ReturnType<typeof requestRecordStore>;
