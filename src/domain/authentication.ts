import type { AuditStore } from '../store/audit.js';
import type { DealerStore } from '../store/dealers.js';
import type { PartnerRecord, PartnerStore } from '../store/partners.js';
import { type Access, isScope, type Partner } from './access.js';
import { ProblemError } from './errors.js';
import { hashSecret, isWellFormedSecret } from './secrets.js';

export type FailureReason = 'missing' | 'malformed' | 'unknown';

/** A 401 of partner authentication, with the reason kept for metrics and the audit log. */
export class AuthFailure extends ProblemError {
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super('UNAUTHORIZED', message);
  }
}

export interface AuthenticationDeps {
  partners: Pick<PartnerStore, 'findBySecretHash' | 'touch'>;
  dealers: Pick<DealerStore, 'subtree'>;
  audit: Pick<AuditStore, 'recordAuthFailure'>;
}

/**
 * Who a partner secret belongs to and what it may see: the partner found by the hash of its
 * secret, with its access scope resolved to every dealer profile under its roots.
 */
export function partnerAuthentication(deps: AuthenticationDeps) {
  // lastUsedAt is kept to the minute; remembering our last write spares a write per request.
  const lastTouched = new Map<string, number>();

  /** The partner of a presented secret, or an AuthFailure saying why not. */
  async function identify(secret: string | undefined): Promise<PartnerRecord> {
    if (!secret) {
      throw new AuthFailure(
        'missing',
        'An API secret is required: send "Authorization: Bearer <secret>" or "X-API-Key: <secret>".',
      );
    }
    // A malformed secret (wrong prefix, length or checksum) is rejected before any lookup. The
    // two answers say which case it is (decisions.md): both are safe to tell, and they send the
    // partner to different fixes (copy the secret again / ask the operator for a current one).
    if (!isWellFormedSecret(secret)) {
      throw new AuthFailure(
        'malformed',
        'The API secret is malformed: it is not an fc_ secret of the issued length, or its checksum does not match (a truncated or mistyped secret). Copy it again exactly as issued.',
      );
    }
    const record = await deps.partners.findBySecretHash(hashSecret(secret));
    if (!record) {
      throw new AuthFailure(
        'unknown',
        'The API secret is not recognized: it is well-formed, but unknown, rotated away or disabled. Ask the operator for a current secret.',
      );
    }
    return record;
  }

  /** The partner as requests see it: its scopes and every dealer profile it may see. */
  async function partnerOf(record: PartnerRecord): Promise<Partner> {
    const access: Access =
      record.accessScope === 'global'
        ? { scope: 'global', rootProfileIds: [], profileIds: [] }
        : {
            scope: 'restricted',
            rootProfileIds: record.rootProfileIds,
            profileIds: await deps.dealers.subtree(record.rootProfileIds),
          };
    return {
      id: record.id,
      name: record.name,
      scopes: record.scopes.filter(isScope),
      access,
      rateLimitPerMinute: record.rateLimitPerMinute,
    };
  }

  return {
    identify,
    partnerOf,
    /** Records that the partner used its secret (at most one write a minute per partner). */
    async touch(partnerId: string): Promise<void> {
      const now = Date.now();
      if ((lastTouched.get(partnerId) ?? 0) >= now - 60_000) return;
      lastTouched.set(partnerId, now);
      await deps.partners.touch(partnerId);
    },
    recordFailure: (entry: Parameters<AuditStore['recordAuthFailure']>[0]) =>
      deps.audit.recordAuthFailure(entry),
  };
}

export type PartnerAuthentication = ReturnType<typeof partnerAuthentication>;
