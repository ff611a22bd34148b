import { randomBytes } from 'node:crypto';
import type { AuditContext, AuditStore } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { OperatorRecord, OperatorStore } from '../store/operators.js';
import { problem } from './errors.js';
import { messages } from './messages.js';
import { hashSecret, safeEqual } from './secrets.js';

/** Who is acting on the admin API: a named operator, or the bootstrap ADMIN_TOKEN. */
export interface Operator {
  /** null for ADMIN_TOKEN. */
  id: string | null;
  name: string;
}

const BOOTSTRAP_OPERATOR = 'ADMIN_TOKEN';
// Hex: a token may follow --token on a command line (a base64url one could start with "-").
const TOKEN_PATTERN = /^fco_[0-9a-f]{48}$/;

/**
 * Operator accounts: named tokens created by an operator (from the CLI, the API or the console),
 * listed and revoked; ADMIN_TOKEN stays valid as the bootstrap. Every admin request knows its
 * operator, so the audit log records who acted.
 */
export function operatorAccess(deps: {
  db: Db;
  store: OperatorStore;
  audit: Pick<AuditStore, 'record'>;
  adminToken: string;
}) {
  const lastTouched = new Map<string, number>();
  return {
    /** The operator a bearer token belongs to, or undefined. */
    async identify(token: string): Promise<Operator | undefined> {
      if (safeEqual(token, deps.adminToken)) return { id: null, name: BOOTSTRAP_OPERATOR };
      if (!TOKEN_PATTERN.test(token)) return undefined;
      const found = await deps.store.findLive(hashSecret(token));
      if (!found) return undefined;
      const now = Date.now();
      if ((lastTouched.get(found.id) ?? 0) < now - 60_000) {
        lastTouched.set(found.id, now);
        await deps.store.touch(found.id);
      }
      return { id: found.id, name: found.name };
    },

    list: () => deps.store.list(),

    /** A new named token; the answer holds it, shown only now. */
    async create(name: string, ctx: AuditContext): Promise<OperatorRecord & { token: string }> {
      const token = `fco_${randomBytes(24).toString('hex')}`;
      const created = await deps.db.transaction(async (tx) => {
        const record = await deps.store.create(
          name,
          hashSecret(token),
          ctx.operator ?? BOOTSTRAP_OPERATOR,
          tx,
        );
        if (!record) return undefined;
        await deps.audit.record({ action: 'operator.created', details: { id: record.id, name } }, ctx, tx);
        return record;
      });
      if (!created) {
        const holder = await deps.store.named(name);
        throw problem(
          'CONFLICT',
          holder?.revokedAt
            ? messages.operatorNameRevoked(holder.name, holder.revokedAt)
            : messages.operatorNameTaken(name),
        );
      }
      return { ...created, token };
    },

    /** Revokes a token at once; its next request is refused. */
    async revoke(id: string, ctx: AuditContext): Promise<OperatorRecord> {
      const revoked = await deps.db.transaction(async (tx) => {
        const record = await deps.store.revoke(id, tx);
        if (record)
          await deps.audit.record(
            { action: 'operator.revoked', details: { id, name: record.name } },
            ctx,
            tx,
          );
        return record;
      });
      if (!revoked) throw problem('NOT_FOUND', messages.noLiveOperatorToken(id));
      return revoked;
    },
  };
}

export type OperatorAccess = ReturnType<typeof operatorAccess>;
