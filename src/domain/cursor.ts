import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Position } from '../store/listings/reads.js';
import { problem } from './errors.js';

export type { Position };

interface Payload {
  v: 1;
  /** null: the start, before every listing. */
  p: [string, string] | null;
  /** Fingerprint of the filters the cursor was issued for. */
  f: string;
  /** Each filter's own short hash, by name: to say which filter differs (absent in older cursors). */
  k?: Record<string, string>;
}

/**
 * How a filter's internal name reads in a refusal: the query parameter the partner sends
 * (dealerIds collects dealerId, locationId and profileId); `context` is the list itself.
 */
const PARAMETER_NAMES: Record<string, string> = {
  dealerIds: 'dealerId (or locationId, profileId)',
  parentDealerId: 'parentDealerId (or parentId, companyId)',
  context: "endpoint (the cursor comes from another list, or from a location's list before 2026-11-30)",
};

/**
 * A cursor's form, as the document states it (issue 40) and decode() checks it first: the payload
 * in base64url, a dot, the 32-character MAC. A cursor of this form can still be refused: only one
 * this service signed (for the same filters) is taken, which no pattern can say.
 */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}$/;
/**
 * Room for the longest cursor the service issues: a location list's carries its last location's
 * sort key, a display name of up to 200 characters that JSON may write in 6 bytes each (a control
 * character), about 1,900 characters in all. At 1,000 such a cursor could not be sent back
 * (found 2026-11-30).
 */
export const CURSOR_MAX_LENGTH = 4096;

/** A cursor refused: `why` follows "cursor: " in the message and is the issue's own text. */
export const invalidCursor = (why: string) =>
  problem('INVALID_QUERY', `cursor: ${why}`, [
    { path: 'query.cursor', message: why, code: 'invalid_cursor' },
  ]);

/**
 * Sync cursors: opaque to partners, tamper-evident (HMAC-SHA256 with a key every instance shares
 * through the database), and bound to the filters they were issued for.
 */
export function cursorCodec(key: string) {
  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url').slice(0, 32);
  return {
    encode(position: Position | null, fingerprint: string, parts?: Record<string, string>): string {
      const payload: Payload = {
        v: 1,
        p: position ? [position.ts, position.id] : null,
        f: fingerprint,
        ...(parts ? { k: parts } : {}),
      };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${sign(body)}`;
    },
    decode(cursor: string, fingerprint: string, parts?: Record<string, string>): Position | null {
      if (!CURSOR_PATTERN.test(cursor))
        throw invalidCursor('is malformed; pass nextCursor exactly as received');
      const [body, mac] = cursor.split('.') as [string, string];
      const expected = Buffer.from(sign(body));
      const given = Buffer.from(mac);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        throw invalidCursor('is not one this service issued (corrupted or altered)');
      }
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
      if (payload.f !== fingerprint) {
        const differing = parts && payload.k ? differingFilters(payload.k, parts) : [];
        throw invalidCursor(
          differing.length
            ? `was issued with a different ${differing.join(', ')}; send ${differing.length > 1 ? 'them' : 'it'} as in the request the cursor came from (or start a new walk without cursor)`
            : 'was issued for other filters; send it with the same filters as the request it came from',
        );
      }
      return payload.p ? { ts: payload.p[0], id: payload.p[1] } : null;
    },
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;

/** The filters whose hashes differ, as the partner names them (a filter added or left out too). */
function differingFilters(issued: Record<string, string>, now: Record<string, string>): string[] {
  const names = [...new Set([...Object.keys(issued), ...Object.keys(now)])].sort();
  return names.filter((name) => issued[name] !== now[name]).map((name) => PARAMETER_NAMES[name] ?? name);
}

/**
 * Each filter's own short hash (4 characters: enough to tell two values apart in a refusal; the
 * whole fingerprint still decides), so a cursor can say which filter it was issued with differs.
 */
export function filterParts(filters: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(filters)
      .sort()
      .map((k) => [
        k,
        createHash('sha256').update(JSON.stringify(filters[k])).digest('base64url').slice(0, 4),
      ]),
  );
}

/** A short stable hash of the filters a cursor belongs to. */
export function fingerprint(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(filters)
      .sort()
      .map((k) => [k, filters[k]]),
  );
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}
