import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Position } from '../store/listings-read.js';
import { problem } from './errors.js';

export type { Position };

interface Payload {
  v: 1;
  /** null: the start, before every listing. */
  p: [string, string] | null;
  /** Fingerprint of the filters the cursor was issued for. */
  f: string;
}

const invalid = (why: string) =>
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
    encode(position: Position | null, fingerprint: string): string {
      const payload: Payload = { v: 1, p: position ? [position.ts, position.id] : null, f: fingerprint };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${sign(body)}`;
    },
    decode(cursor: string, fingerprint: string): Position | null {
      const [body, mac, extra] = cursor.split('.');
      if (!body || !mac || extra !== undefined || mac.length !== 32)
        throw invalid('is malformed; pass nextCursor exactly as received');
      const expected = Buffer.from(sign(body));
      const given = Buffer.from(mac);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        throw invalid('is not one this service issued (corrupted or altered)');
      }
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
      if (payload.f !== fingerprint) {
        throw invalid(
          'was issued for other filters; send it with the same filters as the request it came from',
        );
      }
      return payload.p ? { ts: payload.p[0], id: payload.p[1] } : null;
    },
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;

/** A short stable hash of the filters a cursor belongs to. */
export function fingerprint(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(filters)
      .sort()
      .map((k) => [k, filters[k]]),
  );
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}
