import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.js';

export interface OperatorRecord {
  id: string;
  name: string;
  createdAt: string;
  createdBy: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const COLUMNS = 'id, name, created_at, created_by, last_used_at, revoked_at';

function toRecord(row: Record<string, unknown>): OperatorRecord {
  const iso = (v: unknown) => (v ? (v as Date).toISOString() : null);
  return {
    id: row.id as string,
    name: row.name as string,
    createdAt: iso(row.created_at)!,
    createdBy: row.created_by as string,
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
  };
}

/** Named operator tokens, stored as hashes. */
export function operatorStore(db: Queryable) {
  return {
    /**
     * undefined when a token, live or revoked, already has this name (any letter case): the audit
     * log names operators, so a name never passes to a second one. Two creations at once with one
     * name: the live-name index refuses the second.
     */
    async create(
      name: string,
      tokenHash: Buffer,
      createdBy: string,
      tx: Queryable = db,
    ): Promise<OperatorRecord | undefined> {
      const rows = await tx.query(
        'InsertOperatorToken',
        `INSERT INTO operator_tokens (id, name, token_hash, created_by)
         SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM operator_tokens WHERE lower(name) = lower($2))
         ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
        [randomUUID(), name, tokenHash, createdBy],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },
    /** The newest token with this name (any letter case), live or revoked. */
    async named(name: string, tx: Queryable = db): Promise<OperatorRecord | undefined> {
      const rows = await tx.query(
        'OperatorTokenByName',
        `SELECT ${COLUMNS} FROM operator_tokens WHERE lower(name) = lower($1)
         ORDER BY revoked_at IS NULL DESC, created_at DESC LIMIT 1`,
        [name],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },
    async list(): Promise<OperatorRecord[]> {
      const rows = await db.query(
        'ListOperatorTokens',
        `SELECT ${COLUMNS} FROM operator_tokens ORDER BY revoked_at IS NOT NULL, lower(name), created_at`,
      );
      return rows.map(toRecord);
    },
    /** The live token with this hash. */
    async findLive(tokenHash: Buffer): Promise<OperatorRecord | undefined> {
      const rows = await db.query(
        'FindOperatorToken',
        `SELECT ${COLUMNS} FROM operator_tokens WHERE token_hash = $1 AND revoked_at IS NULL`,
        [tokenHash],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },
    /** Revokes a live token; undefined when there is none with this id. */
    async revoke(id: string, tx: Queryable = db): Promise<OperatorRecord | undefined> {
      const rows = await tx.query(
        'RevokeOperatorToken',
        `UPDATE operator_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
        [id],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },
    /** At most once a minute per token. */
    async touch(id: string): Promise<void> {
      await db.query(
        'TouchOperatorToken',
        `UPDATE operator_tokens SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [id],
      );
    },
  };
}

export type OperatorStore = ReturnType<typeof operatorStore>;
