import type { AuditContext, AuditStore } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { DealerStore } from '../store/dealers.js';
import type { PartnerPatch, PartnerRecord, PartnerStore } from '../store/partners.js';
import { DEFAULT_SCOPES, isScope } from './access.js';
import { fieldProblem, problem } from './errors.js';
import { messages } from './messages.js';
import { generateSecret, generateTestSecret, hashSecret } from './secrets.js';
import type {
  AccessInput,
  PartnerCreate,
  PartnerPatchInput,
  PartnerView,
  RotatedSecret,
} from './shapes/partners.js';

export function partnerView(record: PartnerRecord): PartnerView {
  const { accessScope, rootProfileIds, ...rest } = record;
  return {
    ...rest,
    scopes: rest.scopes.filter(isScope),
    access: accessScope === 'global' ? { scope: 'global' } : { scope: 'restricted', rootProfileIds },
  };
}

async function checkRoots(deps: PartnerDeps, access: AccessInput | undefined): Promise<void> {
  if (!access || access.scope === 'global') return;
  const known = await deps.dealers.existing(access.rootProfileIds);
  const missing = access.rootProfileIds.filter((id) => !known.has(id));
  if (missing.length) {
    throw fieldProblem('VALIDATION_FAILED', 'access.rootProfileIds', messages.unknownDealerProfiles(missing));
  }
}

function accessFields(access: AccessInput): Pick<PartnerPatch, 'accessScope' | 'rootProfileIds'> {
  return access.scope === 'global'
    ? { accessScope: 'global', rootProfileIds: [] }
    : { accessScope: 'restricted', rootProfileIds: [...new Set(access.rootProfileIds)] };
}

/** Creates a partner and its first secret; the secret is returned here and never again. */
export async function createPartner(
  deps: PartnerDeps,
  input: PartnerCreate,
  ctx: AuditContext,
): Promise<PartnerView & { secret: string }> {
  await checkRoots(deps, input.access);
  const secret = generateSecret();
  const record = await deps.db.transaction(async (tx) => {
    const created = await deps.partners.create(
      {
        name: input.name,
        scopes: [...new Set(input.scopes ?? DEFAULT_SCOPES)],
        ...(accessFields(input.access) as Required<ReturnType<typeof accessFields>>),
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        secretHash: hashSecret(secret),
      },
      tx,
    );
    const { name, scopes, access, rateLimitPerMinute } = partnerView(created);
    await deps.audit.record(
      {
        action: 'partner.created',
        partnerId: created.id,
        details: { name, scopes, access, rateLimitPerMinute },
      },
      ctx,
      tx,
    );
    return created;
  });
  return { ...partnerView(record), secret };
}

/** The fields of a partner an operator changes, as {from, to}, for the audit log. */
function changes(before: PartnerView, after: PartnerView): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const key of ['name', 'scopes', 'access', 'rateLimitPerMinute'] as const) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      out[key] = { from: before[key], to: after[key] };
  }
  return out;
}

async function updatePartner(
  deps: PartnerDeps,
  id: string,
  patch: PartnerPatchInput,
  ctx: AuditContext,
): Promise<PartnerView | undefined> {
  if (patch.disabledReason !== undefined && patch.disabled !== true) {
    const message = 'is only taken with disabled: true (why the partner is disabled)';
    throw fieldProblem('VALIDATION_FAILED', 'disabledReason', message, 'custom');
  }
  await checkRoots(deps, patch.access);
  return deps.db.transaction(async (tx) => {
    const before = await deps.partners.getForUpdate(id, tx);
    const record = await deps.partners.update(
      id,
      {
        name: patch.name,
        scopes: patch.scopes ? [...new Set(patch.scopes)] : undefined,
        ...(patch.access ? accessFields(patch.access) : {}),
        disabled: patch.disabled,
        disabledReason: patch.disabledReason,
        rateLimitPerMinute: patch.rateLimitPerMinute,
      },
      tx,
    );
    if (!before || !record) return undefined;
    const [from, to] = [partnerView(before), partnerView(record)];
    const changed = changes(from, to);
    // Disabling is its own action: it is what an operator looks for after an incident.
    if (from.disabled !== to.disabled) {
      await deps.audit.record(
        {
          action: to.disabled ? 'partner.disabled' : 'partner.enabled',
          partnerId: id,
          ...(to.disabled && to.disabledReason ? { details: { reason: to.disabledReason } } : {}),
        },
        ctx,
        tx,
      );
    }
    if (Object.keys(changed).length) {
      await deps.audit.record(
        { action: 'partner.updated', partnerId: id, details: { changes: changed } },
        ctx,
        tx,
      );
    }
    return to;
  });
}

export async function rotateSecret(
  deps: PartnerDeps,
  id: string,
  graceSeconds: number,
  ctx: AuditContext,
): Promise<RotatedSecret | undefined> {
  const secret = generateSecret();
  const found = await deps.db.transaction(async (tx) => {
    if (!(await deps.partners.get(id, tx))) return false;
    await deps.partners.rotateSecret(id, hashSecret(secret), graceSeconds, tx);
    // graceSeconds 0 (said outright in the entry): the old secrets stopped working at once.
    await deps.audit.record(
      { action: 'partner.secret_rotated', partnerId: id, details: { graceSeconds } },
      ctx,
      tx,
    );
    return true;
  });
  if (!found) return undefined;
  return {
    id,
    secret,
    previousSecretValidUntil:
      graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null,
  };
}

/**
 * Issues the partner's test secret (docs/test-mode.md), replacing the one it had at once: the
 * secret is returned here and never again. Undefined: no such partner.
 */
export async function issueTestSecret(
  deps: PartnerDeps,
  id: string,
  ctx: AuditContext,
): Promise<{ id: string; secret: string } | undefined> {
  const secret = generateTestSecret();
  const found = await deps.db.transaction(async (tx) => {
    if (!(await deps.partners.get(id, tx))) return false;
    await deps.partners.issueTestSecret(id, hashSecret(secret), tx);
    await deps.audit.record({ action: 'partner.test_secret_issued', partnerId: id, details: {} }, ctx, tx);
    return true;
  });
  return found ? { id, secret } : undefined;
}

/**
 * Revokes the partner's test secret: refused from the next request. Its test data stays (the
 * partner's wipe, or expiry, removes it). Undefined: no such partner; 404 when it has no test secret.
 */
export async function revokeTestSecret(
  deps: PartnerDeps,
  id: string,
  ctx: AuditContext,
): Promise<boolean | undefined> {
  return deps.db.transaction(async (tx) => {
    if (!(await deps.partners.get(id, tx))) return undefined;
    if (!(await deps.partners.revokeTestSecret(id, tx))) return false;
    await deps.audit.record({ action: 'partner.test_secret_revoked', partnerId: id, details: {} }, ctx, tx);
    return true;
  });
}

/**
 * Ends a rotation's grace now: the previous secret is refused from the next request, the current
 * one keeps working (a rotation with no grace would issue a third secret and refuse the one the
 * partner has just moved to). Undefined: no such partner; 409 when no grace is under way.
 */
export async function retirePreviousSecret(
  deps: PartnerDeps,
  id: string,
  ctx: AuditContext,
): Promise<PartnerView | undefined> {
  return deps.db.transaction(async (tx) => {
    if (!(await deps.partners.getForUpdate(id, tx))) return undefined;
    const until = await deps.partners.retirePrevious(id, tx);
    if (!until) throw problem('CONFLICT', messages.noPreviousSecret(id));
    await deps.audit.record(
      { action: 'partner.previous_secret_retired', partnerId: id, details: { graceWasUntil: until } },
      ctx,
      tx,
    );
    const record = await deps.partners.get(id, tx);
    return record && partnerView(record);
  });
}

interface PartnerDeps {
  db: Db;
  partners: PartnerStore;
  dealers: DealerStore;
  audit: AuditStore;
}

/** The operator's partner use cases: create, change, rotate secrets, read. */
export function partnerAdmin(deps: PartnerDeps) {
  return {
    create: (input: Parameters<typeof createPartner>[1], ctx: AuditContext) =>
      createPartner(deps, input, ctx),
    update: (id: string, patch: Parameters<typeof updatePartner>[2], ctx: AuditContext) =>
      updatePartner(deps, id, patch, ctx),
    rotateSecret: (id: string, graceSeconds: number, ctx: AuditContext) =>
      rotateSecret(deps, id, graceSeconds, ctx),
    retirePreviousSecret: (id: string, ctx: AuditContext) => retirePreviousSecret(deps, id, ctx),
    issueTestSecret: (id: string, ctx: AuditContext) => issueTestSecret(deps, id, ctx),
    revokeTestSecret: (id: string, ctx: AuditContext) => revokeTestSecret(deps, id, ctx),
    list: async (): Promise<PartnerView[]> => (await deps.partners.list()).map(partnerView),
    get: async (id: string): Promise<PartnerView | undefined> => {
      const record = await deps.partners.get(id);
      return record && partnerView(record);
    },
  };
}

export type PartnerAdmin = ReturnType<typeof partnerAdmin>;
