import type { Queryable } from './db.js';

export interface AuditContext {
  requestId: string;
  clientIp: string;
  /** The operator who acted (admin API): a token's name, or "ADMIN_TOKEN". */
  operator?: string | undefined;
}

export interface AuditEntry {
  action: string;
  partnerId?: string | null;
  dealerId?: string | null;
  details?: Record<string, unknown>;
}

/** A failed partner authentication; `partnerId` when the secret was known (a disabled partner, an expired secret). */
interface AuthFailureEntry extends AuditContext {
  reason: string;
  partnerId?: string | undefined;
}

interface AuditFilter {
  /** An exact action, or a prefix ending in "." (`partner.`). */
  action?: string | undefined;
  partnerId?: string | undefined;
  /** Who acted: operator, partner, service or anonymous. */
  actor?: string | undefined;
  /** The operator who acted: a token's name, or ADMIN_TOKEN (exact). */
  operator?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  /** Only entries older than this id (the next page). */
  before?: string | undefined;
  limit: number;
}

interface AuditRecord {
  id: string;
  at: string;
  actor: string;
  /** The operator's name, for operator actions. */
  operator: string | null;
  action: string;
  partnerId: string | null;
  /** The partner's current name (null once it no longer exists). */
  partnerName: string | null;
  dealerId: string | null;
  dealerCode: string | null;
  clientIp: string | null;
  requestId: string | null;
  details: Record<string, unknown>;
}

/** The audit log. Callers record inside the transaction of the change, so both land or neither. */
export function auditStore(db: Queryable) {
  const insert = (tx: Queryable, actor: string, entry: AuditEntry, ctx: Partial<AuditContext>) =>
    tx.query(
      'InsertAudit',
      `INSERT INTO audit_log (actor, action, partner_id, dealer_id, client_ip, request_id, details, operator)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        actor,
        entry.action,
        entry.partnerId ?? null,
        entry.dealerId ?? null,
        ctx.clientIp ?? null,
        ctx.requestId ?? null,
        JSON.stringify(entry.details ?? {}),
        ctx.operator ?? null,
      ],
    );

  return {
    /** An operator action (admin API). */
    async record(entry: AuditEntry, ctx: AuditContext, tx: Queryable = db): Promise<void> {
      await insert(tx, 'operator', entry, ctx);
    },

    /**
     * A change a partner made to its own configuration (its webhook endpoints), or one the service
     * made on its own (an endpoint disabled after failing deliveries).
     */
    async recordBy(
      actor: 'partner' | 'service',
      entry: AuditEntry,
      ctx: Partial<AuditContext>,
      tx: Queryable = db,
    ): Promise<void> {
      await insert(tx, actor, entry, ctx);
    },

    /**
     * A partner request refused with 401; `reason` is missing, malformed or unknown. Never the
     * secret. Written on its own, not in a transaction: there is no change to tie it to.
     */
    async recordAuthFailure(failure: AuthFailureEntry): Promise<void> {
      await insert(
        db,
        'anonymous',
        { action: 'auth.failed', partnerId: failure.partnerId ?? null, details: { reason: failure.reason } },
        failure,
      );
    },

    async list(filter: AuditFilter): Promise<AuditRecord[]> {
      const params: unknown[] = [];
      const where: string[] = [];
      const add = (sql: string, value: unknown) => {
        params.push(value);
        where.push(sql.replace('?', `$${params.length}`));
      };
      if (filter.action?.endsWith('.')) add("action LIKE ? || '%'", filter.action.replace(/[\\%_]/g, '\\$&'));
      else if (filter.action) add('action = ?', filter.action);
      if (filter.partnerId) add('partner_id = ?', filter.partnerId);
      if (filter.actor) add('actor = ?', filter.actor);
      if (filter.operator) add('operator = ?', filter.operator);
      if (filter.since) add('at >= ?', filter.since);
      if (filter.until) add('at < ?', filter.until);
      if (filter.before) add('id < ?', filter.before);
      params.push(filter.limit);
      const rows = await db.query(
        'ListAudit',
        // Names joined onto the page only (the page is read by the indexes first).
        `SELECT a.id::text AS id, a.at, a.actor, a.operator, a.action, a.partner_id, p.name AS partner_name,
                a.dealer_id, d.location_code AS dealer_code, a.client_ip, a.request_id, a.details
           FROM (SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
                  ORDER BY audit_log.id DESC LIMIT $${params.length}) a
           LEFT JOIN partners p ON p.id = a.partner_id
           LEFT JOIN dealer_profiles d ON d.id = a.dealer_id
          ORDER BY a.id DESC`,
        params,
      );
      return rows.map((r) => ({
        id: r.id as string,
        at: (r.at as Date).toISOString(),
        actor: r.actor as string,
        operator: (r.operator as string | null) ?? null,
        action: r.action as string,
        partnerId: (r.partner_id as string | null) ?? null,
        partnerName: (r.partner_name as string | null) ?? null,
        dealerId: (r.dealer_id as string | null) ?? null,
        dealerCode: (r.dealer_code as string | null) ?? null,
        clientIp: (r.client_ip as string | null) ?? null,
        requestId: (r.request_id as string | null) ?? null,
        details: r.details as Record<string, unknown>,
      }));
    },
  };
}

/** For actions taken by the service's own tools (demo seeding, benchmark data), not a request. */
export type AuditStore = ReturnType<typeof auditStore>;

export const localContext = (tool: string): AuditContext => ({ requestId: tool, clientIp: 'local' });
