import { randomBytes } from 'node:crypto';
import type { Queryable } from './db.js';

/** The cursor-signing key: created once by whichever instance starts first, then shared by all. */
export async function ensureCursorKey(db: Queryable): Promise<string> {
  await db.query('InitCursorKey', 'UPDATE service_info SET cursor_key = $1 WHERE cursor_key IS NULL', [
    randomBytes(32).toString('base64url'),
  ]);
  const rows = await db.query<{ cursor_key: string }>('CursorKey', 'SELECT cursor_key FROM service_info');
  return rows[0]!.cursor_key;
}
