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
    // A malformed secret (wrong prefix, length or checksum) is rejected before any lookup. The
    // two answers say which case it is (decisions.md): both are safe to tell, and they send the
    // partner to different fixes (copy the secret again / ask the operator for a current one).
    if (!isWellFormedSecret(secret)) {
      throw authFailure(
        'malformed',
        'The API secret is malformed: it is not an fc_ secret of the issued length, or its checksum does not match (a truncated or mistyped secret). Copy it again exactly as issued.',
      );
    }
    const record = await services.partners.findBySecretHash(hashSecret(secret));
    if (!record) {
      throw authFailure(
        'unknown',
        'The API secret is not recognized: it is well-formed, but unknown, rotated away or disabled. Ask the operator for a current secret.',
      );
    }
    return record;
  }

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { rateLimits, metrics } = services;
    let record: Awaited<ReturnType<typeof identify>>;
    try {
      record = await identify(request);
    } catch (error) {
      if (error instanceof AuthFailure) {
        metrics.authFailures.inc({ reason: error.reason });
        // An address past its failure limit gets 429 for further failures; a valid secret from
        // it still works (decisions.md: partners behind one NAT must not lock each other out).
        // A malformed secret fails before any lookup; a well-formed one costs one indexed query.
        rateLimits.assertNotBlocked(request.ip);
        await rateLimits.authFailed(request.ip);
        // Not awaited: the 401 must not wait on (or fail with) the audit write.
        services.audit
          .recordAuthFailure({ requestId: request.id, clientIp: request.ip, reason: error.reason })
          .catch((auditError: unknown) => request.log.warn({ err: auditError }, 'audit write failed'));
      }
      throw error;
    }
    await rateLimits.partner(record.id, record.rateLimitPerMinute, reply);

    const access: Access =
      record.accessScope === 'global'
        ? { scope: 'global', rootProfileIds: [], profileIds: [] }
        : {
            scope: 'restricted',
            rootProfileIds: record.rootProfileIds,
            profileIds: await services.dealers.subtree(record.rootProfileIds),
          };
    // Known before the scope check, so a 403 INSUFFICIENT_SCOPE is logged with its partner too.
    request.partner = {
      id: record.id,
      name: record.name,
      scopes: record.scopes,
      access,
      rateLimitPerMinute: record.rateLimitPerMinute,
    };
    const needed = request.routeOptions.config.scope;
    if (needed && !record.scopes.includes(needed)) {
      throw new ProblemError(
        403,
        'INSUFFICIENT_SCOPE',
        `This operation needs the scope "${needed}"; this API secret has: ${record.scopes.join(', ') || 'none'}.`,
      );
    }
    const now = Date.now();
    if ((lastTouched.get(record.id) ?? 0) < now - 60_000) {
      lastTouched.set(record.id, now);
      await services.partners.touch(record.id);
    }
  };
}

/**
 * The operator's bearer token for /api/admin routes, compared in constant time. Failures are
 * throttled per address like partners' (the token is the key to everything); the right token
 * from a throttled address still works.
 */
export function adminAuth(adminToken: string, rateLimits: Services['rateLimits']) {
  return async function authenticateAdmin(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header.trim()) : null;
    if (!match || !safeEqual(match[1]!, adminToken)) {
      rateLimits.assertNotBlocked(request.ip);
      await rateLimits.authFailed(request.ip);
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
