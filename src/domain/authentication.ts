import type { AuditStore } from '../store/audit.js';
import type { DealerStore } from '../store/dealers.js';
import type { PartnerRecord, PartnerStore } from '../store/partners.js';
import type { KeyState } from '../store/request-records.js';
import { type Access, isScope, type Partner } from './access.js';
import type { AccessCache } from './access-cache.js';
import { ProblemError } from './errors.js';
import { messages } from './messages.js';
import { hashSecret, isTestSecret, isWellFormedSecret } from './secrets.js';

/** Why a secret was refused; `retired` and `disabled` name the partner the secret belongs to. */
type FailureReason = 'missing' | 'malformed' | 'unknown' | 'retired' | 'disabled';

/** Whose secret was sent, when the secret names a partner (even a retired or disabled one). */
export interface Caller {
  partnerId: string;
  key: KeyState;
  /** Which secret exactly (a prefix of its hash): after a rotation, "current" is another secret. */
  secretId?: string;
  /**
   * The partner's last rotation as this request saw it (null: none): with `key`, which secret the
   * request sent, exact to the request (the console's "moved" verdict, domain/rotation.ts).
   */
  rotatedAt?: string | null;
  /** The partner's test secret was sent (docs/test-mode.md). */
  test?: boolean;
}

/** A 401 of partner authentication, with the reason (and the partner) kept for metrics and logs. */
export class AuthFailure extends ProblemError {
  constructor(
    readonly reason: FailureReason,
    message: string,
    readonly caller?: Caller,
  ) {
    super('UNAUTHORIZED', message);
  }
}

// One answer for all three (docs/contract.md#presenting-a-secret): the partner is told to get a
// current secret.
const NOT_RECOGNIZED = messages.secretNotRecognized();

interface AuthenticationDeps {
  partners: Pick<PartnerStore, 'findSecret' | 'findTestSecret' | 'touch'>;
  dealers: Pick<DealerStore, 'subtree'>;
  audit: Pick<AuditStore, 'recordAuthFailure'>;
  /** Secrets and subtrees kept between requests (domain/access-cache.ts). */
  cache: AccessCache;
}

/**
 * Who a partner secret belongs to and what it may see: the partner found by the hash of its
 * secret, with its access scope resolved to every dealer profile under its roots.
 */
export function partnerAuthentication(deps: AuthenticationDeps) {
  // lastUsedAt is kept to the minute; remembering our last write spares a write per request.
  const lastTouched = new Map<string, { at: number; secretId: string | undefined }>();

  /** The partner of a presented secret, or an AuthFailure saying why not. */
  async function identify(
    secret: string | undefined,
  ): Promise<{ record: PartnerRecord; caller: Caller; test: boolean }> {
    if (!secret) {
      throw new AuthFailure(
        'missing',
        'An API secret is required: send "Authorization: Bearer <secret>" or "X-API-Key: <secret>".',
      );
    }
    // A malformed secret (wrong prefix, length or checksum) is rejected before any lookup. The
    // two answers say which case it is (docs/contract.md#presenting-a-secret): both are safe to
    // tell, and they send the partner to different fixes (copy the secret again / ask the operator
    // for a current one).
    if (!isWellFormedSecret(secret)) {
      throw new AuthFailure(
        'malformed',
        'The API secret is malformed: it is not an fc_ secret of the issued length, or its checksum does not match (a truncated or mistyped secret). Copy it again exactly as issued.',
      );
    }
    const hash = hashSecret(secret);
    // A test secret (docs/test-mode.md): the same partner, working on its test data. It has no
    // rotation and no grace: known and current, or unknown.
    if (isTestSecret(secret)) {
      const record = await deps.cache.through(
        `test-secret:${hash.toString('hex')}`,
        () => deps.partners.findTestSecret(hash),
        (value) => value !== undefined,
      );
      if (!record) throw new AuthFailure('unknown', NOT_RECOGNIZED);
      const caller: Caller = {
        test: true,
        partnerId: record.id,
        key: 'current',
        secretId: `test:${hash.toString('hex').slice(0, 11)}`,
      };
      if (record.disabled) throw new AuthFailure('disabled', NOT_RECOGNIZED, caller);
      return { record, caller, test: true };
    }
    // Only known secrets are kept: unknown ones must not fill the cache.
    const found = await deps.cache.through(
      `secret:${hash.toString('hex')}`,
      () => deps.partners.findSecret(hash),
      (value) => value !== undefined,
    );
    if (!found) throw new AuthFailure('unknown', NOT_RECOGNIZED);
    // Which secret it is depends on the time: a previous one retires when its grace period ends.
    const key = keyState(found.expiresAt);
    const caller = {
      partnerId: found.record.id,
      key,
      secretId: hash.toString('hex').slice(0, 16),
      rotatedAt: found.record.secretRotatedAt,
    };
    if (key === 'retired') throw new AuthFailure('retired', NOT_RECOGNIZED, caller);
    if (found.record.disabled) throw new AuthFailure('disabled', NOT_RECOGNIZED, caller);
    return { record: found.record, caller, test: false };
  }

  /** The partner as requests see it: its scopes and every dealer profile it may see. */
  async function partnerOf(record: PartnerRecord, test: boolean): Promise<Partner> {
    const access: Access =
      record.accessScope === 'global'
        ? { scope: 'global', rootProfileIds: [], profileIds: [] }
        : {
            scope: 'restricted',
            rootProfileIds: record.rootProfileIds,
            profileIds: await deps.cache.through(
              `subtree:${[...record.rootProfileIds].sort().join(',')}`,
              () => deps.dealers.subtree(record.rootProfileIds),
            ),
          };
    return {
      id: record.id,
      test,
      name: record.name,
      scopes: record.scopes.filter(isScope),
      access,
      rateLimitPerMinute: record.rateLimitPerMinute,
    };
  }

  return {
    identify,
    partnerOf,
    /** Records that the partner used its secret, and which (at most one write a minute per partner and key). */
    async touch(caller: Caller): Promise<void> {
      // A test secret's use is not the live secret's: "last used" and the rotation's "moved"
      // verdict stay the live secret's.
      if (caller.key === 'retired' || caller.test) return;
      const now = Date.now();
      // Remembered per secret, not per key state: the first request with a new secret after a
      // rotation is written at once (the console's "moved" rests on it), though its state is
      // "current" as the old secret's was.
      const last = lastTouched.get(caller.partnerId);
      if (last && last.secretId === caller.secretId && last.at >= now - 60_000) return;
      lastTouched.set(caller.partnerId, { at: now, secretId: caller.secretId });
      await deps.partners.touch(caller.partnerId, caller.key);
    },
    recordFailure: (entry: Parameters<AuditStore['recordAuthFailure']>[0]) =>
      deps.audit.recordAuthFailure(entry),
  };
}

export type PartnerAuthentication = ReturnType<typeof partnerAuthentication>;

function keyState(expiresAt: Date | null): KeyState {
  if (expiresAt === null) return 'current';
  return expiresAt.getTime() > Date.now() ? 'previous' : 'retired';
}
