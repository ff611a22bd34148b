import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Access, isGlobal, type Partner, type Scope } from '../domain/access.js';
import { ProblemError } from '../domain/errors.js';
import { hashSecret, isWellFormedSecret, safeEqual } from '../domain/secrets.js';
import type { Services } from '../services.js';

declare module 'fastify' {
  interface FastifyRequest {
    partner?: Partner;
  }
  interface FastifyContextConfig {
    /** The scope a partner route needs; every partner route names one. */
    scope?: Scope;
  }
}

const unauthorized = (message: string) => new ProblemError(401, 'UNAUTHORIZED', message);

type FailureReason = 'missing' | 'malformed' | 'unknown';

/** A 401 of partner authentication, with the reason kept for metrics and the audit log. */
class AuthFailure extends ProblemError {
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super(401, 'UNAUTHORIZED', message);
  }
}

const authFailure = (reason: FailureReason, message: string) => new AuthFailure(reason, message);

/** The secret from `Authorization: Bearer …`, else from `X-API-Key`. */
function presentedSecret(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (!match) throw authFailure('malformed', 'The Authorization header must be "Bearer <API secret>".');
    return match[1];
  }
  const key = request.headers['x-api-key'];
  return typeof key === 'string' && key.trim() !== '' ? key.trim() : undefined;
}

/**
 * Partner authentication for every /api/external route: finds the partner by the hash of its
 * secret, checks the scope the route needs, and resolves the dealer profiles it may see.
 */
export function partnerAuth(services: Services) {
  // lastUsedAt is kept to the minute; remembering our last write spares a write per request.
  const lastTouched = new Map<string, number>();

  /** Finds the partner a request's secret belongs to, or throws 401 saying why. */
  async function identify(request: FastifyRequest) {
    const secret = presentedSecret(request);
    if (!secret) {
      throw authFailure(
        'missing',
        'An API secret is required: send "Authorization: Bearer <secret>" or "X-API-Key: <secret>".',
      );
    }
    // A malformed secret (wrong prefix, length or checksum) is rejected before any lookup.
    if (!isWellFormedSecret(secret)) throw authFailure('malformed', 'The API secret is invalid.');
    const record = await services.partners.findBySecretHash(hashSecret(secret));
    if (!record) throw authFailure('unknown', 'The API secret is invalid, rotated or disabled.');
    return record;
  }

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { rateLimits, metrics } = services;
    // An address that keeps failing is refused before its secret is even looked at.
    rateLimits.assertNotBlocked(request.ip);
    let record: Awaited<ReturnType<typeof identify>>;
    try {
      record = await identify(request);
    } catch (error) {
      if (error instanceof AuthFailure) {
        metrics.authFailures.inc({ reason: error.reason });
        await rateLimits.authFailed(request.ip);
        // Not awaited: the 401 must not wait on (or fail with) the audit write.
        services.audit
          .recordAuthFailure({ requestId: request.id, clientIp: request.ip, reason: error.reason })
          .catch((auditError: unknown) => request.log.warn({ err: auditError }, 'audit write failed'));
      }
      throw error;
    }
    await rateLimits.partner(record.id, record.rateLimitPerMinute, reply);

    const needed = request.routeOptions.config.scope;
    if (needed && !record.scopes.includes(needed)) {
      throw new ProblemError(
        403,
        'INSUFFICIENT_SCOPE',
        `This operation needs the scope "${needed}"; this API secret has: ${record.scopes.join(', ') || 'none'}.`,
      );
    }
    const access: Access =
      record.accessScope === 'global'
        ? { scope: 'global', rootProfileIds: [], profileIds: [] }
        : {
            scope: 'restricted',
            rootProfileIds: record.rootProfileIds,
            profileIds: await services.dealers.subtree(record.rootProfileIds),
          };
    request.partner = {
      id: record.id,
      name: record.name,
      scopes: record.scopes,
      access,
      rateLimitPerMinute: record.rateLimitPerMinute,
    };
    const now = Date.now();
    if ((lastTouched.get(record.id) ?? 0) < now - 60_000) {
      lastTouched.set(record.id, now);
      await services.partners.touch(record.id);
    }
  };
}

/** The operator's bearer token for /api/admin routes, compared in constant time. */
export function adminAuth(adminToken: string) {
  return async function authenticateAdmin(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header.trim()) : null;
    if (!match || !safeEqual(match[1]!, adminToken)) {
      throw unauthorized('The admin API needs "Authorization: Bearer <ADMIN_TOKEN>".');
    }
  };
}

/** `meta.partner` as the spec shows it on partner responses. */
export function partnerMeta(partner: Partner) {
  return {
    id: partner.id,
    name: partner.name,
    access: isGlobal(partner.access)
      ? { scope: 'global' as const, rootProfileIds: [], profileIds: [] }
      : partner.access,
  };
}
