import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.js';

export interface PartnerRecord {
  id: string;
  name: string;
  /** As stored; the domain reads only the scopes it knows (domain/access.ts). */
  scopes: string[];
  accessScope: 'global' | 'restricted';
  rootProfileIds: string[];
  rateLimitPerMinute: number | null;
  disabled: boolean;
  disabledReason: string | null;
  lastUsedAt: string | null;
  /** Which secret the last use sent: the current one, or the previous one during a grace period. */
  lastUsedKey: 'current' | 'previous' | null;
  /** Until when the previous secret still works; null when none does (read with VIEW_COLUMNS). */
  previousSecretValidUntil: string | null;
  /** When the secret was last rotated; null: never (or only before migration 012). */
  secretRotatedAt: string | null;
  /** When the partner's test secret was issued; null: it holds none (read with VIEW_COLUMNS). */
  testSecretIssuedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = `id, name, scopes, access_scope, root_profile_ids, rate_limit_per_minute, disabled,
  disabled_reason, last_used_at, last_used_key, secret_rotated_at, created_at, updated_at`;
/**
 * COLUMNS and, for the operator, until when the previous secret still works (a rotation's grace),
 * and the partner's last request as the request records have it (migration 015): last_used_at is
 * written at most once a minute, the records within a fraction of a second.
 */
const VIEW_COLUMNS = `${COLUMNS}, (SELECT max(s.expires_at) FROM partner_secrets s
  WHERE s.partner_id = partners.id AND s.expires_at > now()) AS previous_secret_valid_until,
  (SELECT u.last_at FROM partner_key_use u WHERE u.partner_id = partners.id AND u.key <> 'retired'
   ORDER BY u.last_at DESC LIMIT 1) AS recorded_use_at,
  (SELECT CASE WHEN u.key = 'current' AND u.rotated_at = coalesce(partners.secret_rotated_at, '-infinity')
     THEN 'current' ELSE 'previous' END
   FROM partner_key_use u WHERE u.partner_id = partners.id AND u.key <> 'retired'
   ORDER BY u.last_at DESC LIMIT 1) AS recorded_use_key,
  (SELECT t.created_at FROM partner_test_secrets t WHERE t.partner_id = partners.id) AS test_secret_issued_at`;

/**
 * The later of the two records of the last use: the once-a-minute one, and the request records'
 * (a use of the secret that was current before the latest rotation is a use of the previous one).
 */
function lastUse(row: Record<string, unknown>): Pick<PartnerRecord, 'lastUsedAt' | 'lastUsedKey'> {
  const touched = row.last_used_at as Date | null;
  const recorded = (row.recorded_use_at as Date | null | undefined) ?? null;
  if (recorded && (!touched || recorded >= touched))
    return {
      lastUsedAt: recorded.toISOString(),
      lastUsedKey: row.recorded_use_key as 'current' | 'previous',
    };
  return {
    lastUsedAt: touched ? touched.toISOString() : null,
    lastUsedKey: (row.last_used_key as 'current' | 'previous' | null) ?? null,
  };
}

function toRecord(row: Record<string, unknown>): PartnerRecord {
  return {
    id: row.id as string,
    name: row.name as string,
    scopes: row.scopes as string[],
    accessScope: row.access_scope as 'global' | 'restricted',
    rootProfileIds: row.root_profile_ids as string[],
    rateLimitPerMinute: row.rate_limit_per_minute as number | null,
    disabled: row.disabled as boolean,
    disabledReason: (row.disabled_reason as string | null) ?? null,
    ...lastUse(row),
    previousSecretValidUntil: row.previous_secret_valid_until
      ? (row.previous_secret_valid_until as Date).toISOString()
      : null,
    secretRotatedAt: row.secret_rotated_at ? (row.secret_rotated_at as Date).toISOString() : null,
    testSecretIssuedAt: row.test_secret_issued_at ? (row.test_secret_issued_at as Date).toISOString() : null,
    createdAt: (row.created_at as Date).toISOString(),
    updatedAt: (row.updated_at as Date).toISOString(),
  };
}

export interface PartnerPatch {
  name?: string | undefined;
  scopes?: string[] | undefined;
  accessScope?: 'global' | 'restricted' | undefined;
  rootProfileIds?: string[] | undefined;
  disabled?: boolean | undefined;
  /** With disabled: true, why (null: none given); enabling clears it. */
  disabledReason?: string | null | undefined;
  rateLimitPerMinute?: number | null | undefined;
}

export function partnerStore(db: Queryable) {
  return {
    async create(
      input: Required<Omit<PartnerPatch, 'disabled' | 'disabledReason'>> & { secretHash: Buffer },
      tx: Queryable = db,
    ): Promise<PartnerRecord> {
      const id = randomUUID();
      const rows = await tx.query(
        'InsertPartner',
        `INSERT INTO partners (id, name, scopes, access_scope, root_profile_ids, rate_limit_per_minute)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${VIEW_COLUMNS}`,
        [id, input.name, input.scopes, input.accessScope, input.rootProfileIds, input.rateLimitPerMinute],
      );
      await tx.query(
        'InsertSecret',
        'INSERT INTO partner_secrets (secret_hash, partner_id) VALUES ($1, $2)',
        [input.secretHash, id],
      );
      return toRecord(rows[0]!);
    },

    async get(id: string, tx: Queryable = db): Promise<PartnerRecord | undefined> {
      const rows = await tx.query('GetPartner', `SELECT ${VIEW_COLUMNS} FROM partners WHERE id = $1`, [id]);
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    /**
     * Like get, and holds the row until the transaction ends: what an update records as "from"
     * is then what it replaced, not a value a concurrent update has already changed.
     */
    async getForUpdate(id: string, tx: Queryable): Promise<PartnerRecord | undefined> {
      const rows = await tx.query(
        'GetPartnerForUpdate',
        `SELECT ${VIEW_COLUMNS} FROM partners WHERE id = $1 FOR UPDATE`,
        [id],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    async list(tx: Queryable = db): Promise<PartnerRecord[]> {
      const rows = await tx.query('ListPartners', `SELECT ${VIEW_COLUMNS} FROM partners ORDER BY name, id`);
      return rows.map(toRecord);
    },

    async update(id: string, patch: PartnerPatch, tx: Queryable = db): Promise<PartnerRecord | undefined> {
      const rows = await tx.query(
        'UpdatePartner',
        `UPDATE partners SET
           name = coalesce($2, name),
           scopes = coalesce($3, scopes),
           access_scope = coalesce($4, access_scope),
           root_profile_ids = coalesce($5, root_profile_ids),
           disabled = coalesce($6, disabled),
           disabled_reason = CASE WHEN $6::boolean IS NULL THEN disabled_reason WHEN $6 THEN $9::text END,
           rate_limit_per_minute = CASE WHEN $7 THEN $8::integer ELSE rate_limit_per_minute END,
           updated_at = now()
         WHERE id = $1 RETURNING ${VIEW_COLUMNS}`,
        [
          id,
          patch.name ?? null,
          patch.scopes ?? null,
          patch.accessScope ?? null,
          patch.rootProfileIds ?? null,
          patch.disabled ?? null,
          patch.rateLimitPerMinute !== undefined,
          patch.rateLimitPerMinute ?? null,
          patch.disabledReason ?? null,
        ],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    /**
     * Replaces the partner's secret. Old secrets stop working at once, or after `graceSeconds`
     * when the operator asked for an overlap so the partner can roll out the new one. Their
     * hashes stay (expired): a request still sending one is then attributed to the partner as
     * "retired", not lost among unknown secrets.
     */
    async rotateSecret(
      id: string,
      secretHash: Buffer,
      graceSeconds: number,
      tx: Queryable = db,
    ): Promise<void> {
      await tx.query(
        'ExpireSecrets',
        `UPDATE partner_secrets SET expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $2))
         WHERE partner_id = $1`,
        [id, graceSeconds],
      );
      await tx.query(
        'InsertSecret',
        'INSERT INTO partner_secrets (secret_hash, partner_id) VALUES ($1, $2)',
        [secretHash, id],
      );
      // Every use so far was of a secret that is now the previous one: "current" must come from a
      // request made with the new secret, or the console would say the partner moved when it has not.
      // The time of the rotation: the console counts requests per secret from it.
      await tx.query(
        'RotationMovesLastUse',
        `UPDATE partners SET secret_rotated_at = now(),
           last_used_key = CASE WHEN last_used_key IS NULL THEN NULL ELSE 'previous' END
         WHERE id = $1`,
        [id],
      );
    },

    /**
     * Ends a grace now: the previous secrets still working are retired (refused from the next
     * request); the current one stays. The end of the grace it cut short; null: none was under way.
     */
    async retirePrevious(id: string, tx: Queryable = db): Promise<string | null> {
      const rows = await tx.query(
        'RetirePreviousSecrets',
        `WITH ended AS (
           UPDATE partner_secrets SET expires_at = now() WHERE partner_id = $1 AND expires_at > now()
           RETURNING 1)
         SELECT (SELECT max(expires_at) FROM partner_secrets WHERE partner_id = $1 AND expires_at > now()) AS until,
                (SELECT count(*) FROM ended)::int AS n`,
        [id],
      );
      const row = rows[0];
      return row && Number(row.n) > 0 ? (row.until as Date).toISOString() : null;
    },

    /**
     * The partner a secret hash was issued to, current or not, with which of its secrets it is:
     * the current one, the previous one in its grace period, or one retired by a rotation.
     */
    async findSecret(
      secretHash: Buffer,
      tx: Queryable = db,
    ): Promise<{ record: PartnerRecord; expiresAt: Date | null } | undefined> {
      const rows = await tx.query(
        'FindPartnerBySecret',
        `SELECT ${COLUMNS.replace(/(\w+)/g, 'p.$1')}, s.expires_at AS secret_expires_at
         FROM partner_secrets s JOIN partners p ON p.id = s.partner_id WHERE s.secret_hash = $1`,
        [secretHash],
      );
      const row = rows[0];
      // A secret without an expiry is current; one with is previous until then, retired after.
      return row
        ? { record: toRecord(row), expiresAt: (row.secret_expires_at as Date | null) ?? null }
        : undefined;
    },

    /**
     * The partner a test secret hash was issued to (docs/test-mode.md); a revoked or replaced
     * test secret is gone, so it is simply unknown.
     */
    async findTestSecret(secretHash: Buffer, tx: Queryable = db): Promise<PartnerRecord | undefined> {
      const rows = await tx.query(
        'FindPartnerByTestSecret',
        `SELECT ${COLUMNS.replace(/(\w+)/g, 'p.$1')}
         FROM partner_test_secrets s JOIN partners p ON p.id = s.partner_id WHERE s.secret_hash = $1`,
        [secretHash],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    },

    /** Issues the partner's test secret, replacing (ending at once) the one it had. */
    async issueTestSecret(id: string, secretHash: Buffer, tx: Queryable = db): Promise<void> {
      await tx.query(
        'IssueTestSecret',
        `INSERT INTO partner_test_secrets (secret_hash, partner_id) VALUES ($1, $2)
         ON CONFLICT (partner_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, created_at = now()`,
        [secretHash, id],
      );
    },

    /** Revokes the partner's test secret; false when it had none. */
    async revokeTestSecret(id: string, tx: Queryable = db): Promise<boolean> {
      const rows = await tx.query(
        'RevokeTestSecret',
        'DELETE FROM partner_test_secrets WHERE partner_id = $1 RETURNING 1',
        [id],
      );
      return rows.length > 0;
    },

    /** Records use (and which secret it sent) at most once a minute per partner, or when the secret changes. */
    async touch(id: string, key: 'current' | 'previous', tx: Queryable = db): Promise<void> {
      await tx.query(
        'TouchPartner',
        `UPDATE partners SET last_used_at = now(), last_used_key = $2
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute'
                            OR last_used_key IS DISTINCT FROM $2)`,
        [id, key],
      );
    },
  };
}

export type PartnerStore = ReturnType<typeof partnerStore>;
