import type { FastifyReply, FastifyRequest } from 'fastify';
import { isGlobal, type Partner, type Scope } from '../domain/access.js';
import { AuthFailure, type Caller, type PartnerAuthentication } from '../domain/authentication.js';
import { problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import type { Operator, OperatorAccess } from '../domain/operators.js';
import type { Metrics } from './metrics.js';
import type { RateLimits } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    partner?: Partner;
    /** Whose secret the request sent, set even when it was refused (request records, metrics). */
    caller?: Caller;
    /**
     * The secret was looked at (and a failure counted): an unknown secret has no caller, and must
     * not be looked up and counted a second time when the request's error is answered.
     */
    attributed?: boolean;
    /** Who is acting on the admin API. */
    operator?: Operator;
    /** A bulk upsert's items written (created or updated) and refused, for the request records. */
    bulkOutcome?: { written: number; failed: number };
  }
  interface FastifyContextConfig {
    /**
     * The scope a partner route needs (all of them, when several; one of them, with anyOf);
     * every partner route names one.
     */
    scope?: Scope | readonly Scope[] | { anyOf: readonly Scope[] };
  }
}

const unauthorized = (message: string) => problem('UNAUTHORIZED', message);

/** The secret from `Authorization: Bearer …`, else from `X-API-Key`. */
function presentedSecret(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (!match) throw new AuthFailure('malformed', 'The Authorization header must be "Bearer <API secret>".');
    return match[1];
  }
  const key = request.headers['x-api-key'];
  return typeof key === 'string' && key.trim() !== '' ? key.trim() : undefined;
}

/**
 * Partner authentication for every /api/external route: identifies the partner by its secret
 * (domain/authentication.ts), counts and throttles failures, applies the partner's rate limit,
 * and checks the scope the route needs.
 */
export function partnerAuth({
  authentication,
  rateLimits,
  metrics,
}: {
  authentication: PartnerAuthentication;
  rateLimits: RateLimits;
  metrics: Pick<Metrics, 'authFailures'>;
}) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.attributed = true;
    let identified: Awaited<ReturnType<PartnerAuthentication['identify']>>;
    try {
      identified = await authentication.identify(presentedSecret(request));
    } catch (error) {
      if (error instanceof AuthFailure) {
        request.caller = error.caller;
        metrics.authFailures.inc({ reason: error.reason, partner: error.caller?.partnerId ?? 'none' });
        // An address past its failure limit gets 429 for further failures; a valid secret from
        // it still works (docs/contract.md#failed-authentication: partners behind one NAT must not
        // lock each other out).
        // A malformed secret fails before any lookup; a well-formed one costs one indexed query.
        rateLimits.assertNotBlocked(request.ip);
        await rateLimits.authFailed(request.ip);
        // Not awaited: the 401 must not wait on (or fail with) the audit write.
        authentication
          .recordFailure({
            requestId: request.id,
            clientIp: request.ip,
            reason: error.reason,
            partnerId: error.caller?.partnerId,
          })
          .catch((auditError: unknown) => request.log.warn({ err: auditError }, 'audit write failed'));
      }
      throw error;
    }
    const { record } = identified;
    request.caller = identified.caller;
    await rateLimits.partner(record.id, record.rateLimitPerMinute, reply, identified.test);
    // Known before the scope check, so a 403 INSUFFICIENT_SCOPE is logged with its partner too.
    request.partner = await authentication.partnerOf(record, identified.test);
    // Said on every answer, so a partner (and its logs) always knows which data it worked on.
    if (identified.test) reply.header('Forecourt-Mode', 'test');
    // A use of the secret, whatever the answer: "last used" and which secret must show a partner
    // still sending its previous secret, even to operations it may not call.
    await authentication.touch(identified.caller);
    const config = request.routeOptions.config.scope;
    const anyOf = typeof config === 'object' && 'anyOf' in config;
    const needed: readonly Scope[] =
      config === undefined ? [] : typeof config === 'string' ? [config] : anyOf ? config.anyOf : config;
    const has = (scope: Scope) => record.scopes.includes(scope);
    if (needed.length && !(anyOf ? needed.some(has) : needed.every(has))) {
      throw problem('INSUFFICIENT_SCOPE', messages.insufficientScope(needed, anyOf, record.scopes));
    }
  };
}

/**
 * Whose secret a request to a path no partner route matched carries, so its 404 is on that
 * partner's record too (a misspelt path is a common "why did it fail?"). Never refuses: the 404 is
 * the answer. The lookup is the one authentication makes, throttled the same way: none from an
 * address past its failure limit, and an unknown secret counts as a failure.
 */
export function callerAttribution({
  authentication,
  rateLimits,
}: {
  authentication: PartnerAuthentication;
  rateLimits: RateLimits;
}) {
  return async function attribute(request: FastifyRequest): Promise<void> {
    if (request.attributed) return;
    request.attributed = true;
    try {
      rateLimits.assertNotBlocked(request.ip);
      request.caller = (await authentication.identify(presentedSecret(request))).caller;
    } catch (error) {
      if (!(error instanceof AuthFailure)) return;
      request.caller = error.caller;
      if (error.reason === 'unknown') await rateLimits.authFailed(request.ip).catch(() => {});
    }
  };
}

/**
 * The operator's bearer token for /api/admin routes: ADMIN_TOKEN (compared in constant time) or a
 * named operator token; the request then knows its operator, for the audit log. Failures are
 * throttled per address like partners' (a token is the key to everything); the right token from
 * a throttled address still works.
 */
export function adminAuth(operators: Pick<OperatorAccess, 'identify'>, rateLimits: RateLimits) {
  return async function authenticateAdmin(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header.trim()) : null;
    const operator = match ? await operators.identify(match[1]!) : undefined;
    if (!operator) {
      rateLimits.assertNotBlocked(request.ip, 'a valid operator token (fco_…) or ADMIN_TOKEN');
      await rateLimits.authFailed(request.ip);
      throw unauthorized(
        'The admin API needs "Authorization: Bearer <token>": an operator token (fco_…) or ADMIN_TOKEN.',
      );
    }
    request.operator = operator;
  };
}

/** `meta.partner` as partner responses carry it (docs/contract.md#access-scope). */
export function partnerMeta(partner: Partner) {
  return {
    id: partner.id,
    name: partner.name,
    access: isGlobal(partner.access)
      ? { scope: 'global' as const, rootProfileIds: [], profileIds: [] }
      : partner.access,
  };
}
