import type {
  FailureFilter,
  FailureRecord,
  RequestRecordStore,
  TestActivity,
} from '../../store/request-records.js';
import { NO_PARTNER, noUsage, USAGE_COUNTS } from '../../store/request-records.js';
import { type CursorCodec, fingerprint } from '../cursor.js';
import { problem } from '../errors.js';
import { messages } from '../messages.js';

export const DEFAULT_RECORD_PAGE = 50;
export const MAX_RECORD_PAGE = 200;

/** The filters of a request-record list, as the query gives them. */
interface RecordQuery {
  /** An exact status (`429`) or a class (`4xx`, `5xx`). */
  status?: string | undefined;
  code?: string | undefined;
  since?: string | undefined;
  pageSize?: number | undefined;
  cursor?: string | undefined;
}

/** The operator's further filters (the console's request log). */
export interface OperatorRecordQuery extends RecordQuery {
  partnerId?: string | undefined;
  until?: string | undefined;
  route?: string | undefined;
  /** A secret state, or "none": requests whose secret identified no partner. */
  key?: 'current' | 'previous' | 'retired' | 'none' | undefined;
}

export const USAGE_WINDOWS = {
  '24h': { hours: 24, bucketMinutes: 60 },
  '7d': { hours: 168, bucketMinutes: 360 },
};
export type UsageWindow = keyof typeof USAGE_WINDOWS;
/** Usage from a given time: the bucket sizes tried, smallest first, to keep at most this many. */
const SINCE_BUCKETS = [1, 5, 15, 60, 360];
const MAX_SINCE_BUCKETS = 180;
/** How far back usage from a given time may start (the 7-day window's reach). */
export const MAX_SINCE_DAYS = 7;

function statusRange(status: string | undefined): FailureFilter['status'] {
  if (status === undefined) return undefined;
  const cls = /^([45])xx$/i.exec(status);
  if (cls) return { min: Number(cls[1]) * 100, max: Number(cls[1]) * 100 + 99 };
  return { min: Number(status), max: Number(status) };
}

/** What a partner sees of one of its failed requests. */
function failureView(record: FailureRecord) {
  return {
    requestId: record.requestId,
    at: record.at,
    method: record.method,
    route: record.route,
    status: record.status,
    code: record.code,
    message: record.message,
    issues: record.issues,
    issueCount: record.issueCount,
    durationMs: record.durationMs,
    key: record.key,
    test: record.test,
  };
}

/** The operator's view adds whose request it was. */
function operatorFailureView(record: FailureRecord) {
  return {
    ...failureView(record),
    listing: record.listing ?? null,
    partner: record.partnerId ? { id: record.partnerId, name: record.partnerName } : null,
  };
}

/**
 * Reading request records: a partner its own failed requests, the operator anyone's and the
 * per-partner usage. Each read first writes what this instance still holds, so a request that
 * has just failed is there when its partner asks (other instances write within 200 ms).
 */
export function requestRecordReads(deps: {
  store: Pick<
    RequestRecordStore,
    'failures' | 'usage' | 'topCodes' | 'traffic' | 'notKept' | 'keyUse' | 'perPartner' | 'testUse'
  >;
  flush: () => Promise<void>;
  cursors: CursorCodec;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;

  async function page(scope: FailureFilter & { scopeKey: string }, query: OperatorRecordQuery) {
    const pageSize = Math.min(query.pageSize ?? DEFAULT_RECORD_PAGE, MAX_RECORD_PAGE);
    const filter: FailureFilter = {
      ...(scope.partnerId === undefined ? {} : { partnerId: scope.partnerId }),
      ...(scope.test === undefined ? {} : { test: scope.test }),
      status: statusRange(query.status),
      ...(query.code === undefined ? {} : { code: query.code.toUpperCase() }),
      ...(query.since === undefined ? {} : { since: query.since }),
      ...(query.until === undefined ? {} : { until: query.until }),
      ...(query.route === undefined ? {} : { route: query.route }),
      ...(query.key === undefined ? {} : { key: query.key === 'none' ? null : query.key }),
    };
    // A cursor is bound to the filters it was made under: the next page of another list is refused.
    const print = `requests:${fingerprint({ scope: scope.scopeKey, status: query.status, code: filter.code, since: query.since, until: query.until, route: query.route, key: query.key })}`;
    const before = query.cursor === undefined ? null : deps.cursors.decode(query.cursor, print);
    await deps.flush();
    const [rows, notKept] = await Promise.all([
      deps.store.failures(filter, pageSize + 1, before?.id ?? null),
      // A list that holds less than happened says so (past the per-minute limit, failures are
      // only counted): the filters on status and code do not apply to that count.
      deps.store.notKept(scope.partnerId, query.since, scope.test),
    ]);
    const shown = rows.slice(0, pageSize);
    const hasMore = rows.length > pageSize;
    const last = shown[shown.length - 1];
    return {
      shown,
      meta: { failuresNotKept: notKept },
      pagination: {
        pageSize,
        hasMore,
        ...(hasMore && last ? { nextCursor: deps.cursors.encode({ ts: last.at, id: last.id }, print) } : {}),
      },
    };
  }

  async function newest(filter: FailureFilter): Promise<FailureRecord> {
    await deps.flush();
    const [found] = await deps.store.failures(filter, 1, null);
    if (!found) {
      throw problem('NOT_FOUND', messages.noFailedRequest(String(filter.requestId)));
    }
    return found;
  }

  return {
    /** Resolves once what this instance recorded is written (a read of "last used" waits for it). */
    written: () => deps.flush(),
    /** Which secret each partner's requests sent, per rotation, exact to the request. */
    async keyUse(partnerIds: string[]) {
      await deps.flush();
      return deps.store.keyUse(partnerIds);
    },
    /**
     * What a partner has tried in test mode, each sign null until it did (docs/test-mode.md,
     * "What the operator sees"), and the test listings it holds.
     */
    async testUse(partnerId: string) {
      await deps.flush();
      const found = await deps.store.testUse(partnerId);
      if (!found) throw problem('NOT_FOUND', messages.noPartner(partnerId));
      const sign = (activity: TestActivity) => {
        const use = found.tried.find((t) => t.activity === activity);
        return use ? { count: use.count, firstAt: use.firstAt, lastAt: use.lastAt } : null;
      };
      return {
        testListings: found.testListings,
        written: sign('write'),
        read: sign('read'),
        synced: sign('sync'),
        events: sign('events'),
        webhooksReceived: sign('webhook'),
      };
    },
    /** Per partner over the last `hours`: requests, errors, retired secrets tried. */
    async perPartner(hours: number) {
      await deps.flush();
      return deps.store.perPartner(new Date(now() - hours * 3_600_000).toISOString());
    },
    /**
     * A partner's failed requests of the caller's mode, newest first: a test secret reads the test
     * requests, a live one the live requests (docs/test-mode.md); its cursor is the mode's too.
     */
    async ofPartner(partner: { id: string; test: boolean }, query: RecordQuery) {
      // A live cursor's scope is the partner's id, as before modes were kept apart: still valid.
      const scopeKey = partner.test ? `${partner.id}:test` : partner.id;
      const scope = { partnerId: partner.id, test: partner.test, scopeKey };
      const { shown, meta, pagination } = await page(scope, query);
      return { data: shown.map(failureView), meta, pagination };
    },
    /** One of the partner's failed requests of its mode by its id (the newest, if the id was reused). */
    async oneOfPartner(partner: { id: string; test: boolean }, requestId: string) {
      return failureView(await newest({ partnerId: partner.id, test: partner.test, requestId }));
    },
    /** Any partner's failed requests (`partnerId` "none": those that named no partner). */
    async ofAny(query: OperatorRecordQuery) {
      const partnerId = query.partnerId === 'none' ? null : query.partnerId;
      const { shown, meta, pagination } = await page(
        { ...(partnerId === undefined ? {} : { partnerId }), scopeKey: query.partnerId ?? '*' },
        query,
      );
      return { data: shown.map(operatorFailureView), meta, pagination };
    },
    async oneOfAny(requestId: string) {
      return operatorFailureView(await newest({ requestId }));
    },
    /** Every partner's requests per minute over the last hour (zeros where quiet), and how many sent any. */
    async traffic() {
      const end = Math.floor(now() / 60_000) * 60_000 + 60_000;
      const start = end - 60 * 60_000;
      await deps.flush();
      const { minutes, activePartners } = await deps.store.traffic(new Date(start).toISOString());
      const byMinute = new Map(minutes.map((m) => [m.minute, m]));
      const perMinute = [];
      for (let t = start; t < end; t += 60_000) {
        const minute = new Date(t).toISOString();
        perMinute.push(
          byMinute.get(minute) ?? { minute, requests: 0, clientErrors: 0, serverErrors: 0, rateLimited: 0 },
        );
      }
      return { perMinute, activePartners };
    },
    /**
     * Requests, errors and items per bucket over the window, with totals and the top error codes.
     * With `from` (a rotation's time, say): from its minute to now instead, in buckets aligned on
     * that minute, as small as keeps them at most 180 (a minute over the first 3 hours).
     */
    async usage(partnerId: string | null, window: UsageWindow, from?: Date, test = false) {
      let { hours, bucketMinutes } = USAGE_WINDOWS[window];
      let start: number;
      let end: number;
      if (from) {
        const first = Math.floor(from.getTime() / 60_000) * 60_000;
        const span = Math.max(0, now() - first);
        bucketMinutes = SINCE_BUCKETS.find((m) => span <= m * 60_000 * MAX_SINCE_BUCKETS) ?? 360;
        start = first;
        end = start + Math.max(1, Math.ceil(span / (bucketMinutes * 60_000))) * bucketMinutes * 60_000;
        hours = (end - start) / 3_600_000;
      } else {
        const bucketMs = bucketMinutes * 60_000;
        end = Math.ceil(now() / bucketMs) * bucketMs;
        start = end - hours * 3_600_000;
      }
      const bucketMs = bucketMinutes * 60_000;
      const since = new Date(start).toISOString();
      await deps.flush();
      const id = partnerId ?? NO_PARTNER;
      const [rows, topCodes] = await Promise.all([
        deps.store.usage(id, since, bucketMinutes, from !== undefined, test),
        deps.store.topCodes(id, since, 10, test),
      ]);
      const byStart = new Map(rows.map((row) => [row.start, row]));
      // Every bucket, empty ones as zeros: a chart's gaps are then real quiet, not missing rows.
      const buckets = [];
      for (let t = start; t < end; t += bucketMs) {
        const at = new Date(t).toISOString();
        buckets.push(byStart.get(at) ?? { start: at, ...noUsage() });
      }
      const totals = noUsage();
      for (const bucket of buckets) for (const name of USAGE_COUNTS) totals[name] += bucket[name];
      return {
        window: from ? ('since' as const) : window,
        test,
        bucketMinutes,
        since,
        totals,
        buckets,
        topErrorCodes: topCodes,
      };
    },
  };
}

export type RequestRecordReads = ReturnType<typeof requestRecordReads>;
