import type { Services } from '../services.js';
import type { AuditContext } from '../store/audit.js';
import type { PartnerPatch, PartnerRecord } from '../store/partners.js';
import { type Access, DEFAULT_SCOPES, type Scope } from './access.js';
import { ProblemError } from './errors.js';
import { generateSecret, hashSecret } from './secrets.js';

export type AccessInput = { scope: 'global' } | { scope: 'restricted'; rootProfileIds: string[] };

export interface PartnerView {
  id: string;
  name: string;
  scopes: Scope[];
  access: { scope: 'global' } | { scope: 'restricted'; rootProfileIds: string[] };
  rateLimitPerMinute: number | null;
  disabled: boolean;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function partnerView(record: PartnerRecord): PartnerView {
  const { accessScope, rootProfileIds, ...rest } = record;
  return {
    ...rest,
    access: accessScope === 'global' ? { scope: 'global' } : { scope: 'restricted', rootProfileIds },
  };
}

async function checkRoots(services: Services, access: AccessInput | undefined): Promise<void> {
  if (!access || access.scope === 'global') return;
  const known = await services.dealers.existing(access.rootProfileIds);
  const missing = access.rootProfileIds.filter((id) => !known.has(id));
  if (missing.length) {
    throw new ProblemError(
      422,
      'VALIDATION_FAILED',
      `access.rootProfileIds: unknown dealer profile ${missing.join(', ')}`,
      [
        {
          path: 'access.rootProfileIds',
          message: `unknown dealer profile ${missing.join(', ')}`,
          code: 'invalid',
        },
      ],
    );
  }
}

function accessFields(access: AccessInput): Pick<PartnerPatch, 'accessScope' | 'rootProfileIds'> {
  return access.scope === 'global'
    ? { accessScope: 'global', rootProfileIds: [] }
    : { accessScope: 'restricted', rootProfileIds: [...new Set(access.rootProfileIds)] };
}

/** Creates a partner and its first secret; the secret is returned here and never again. */
export async function createPartner(
  services: Services,
  input: {
    name: string;
    scopes?: Scope[] | undefined;
    access: AccessInput;
    rateLimitPerMinute?: number | null | undefined;
  },
  ctx: AuditContext,
): Promise<PartnerView & { secret: string }> {
  await checkRoots(services, input.access);
  const secret = generateSecret();
  const record = await services.db.transaction(async (tx) => {
    const created = await services.partners.create(
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
    await services.audit.record(
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

export async function updatePartner(
  services: Services,
  id: string,
  patch: {
    name?: string;
    scopes?: Scope[];
    access?: AccessInput;
    disabled?: boolean;
    rateLimitPerMinute?: number | null;
  },
  ctx: AuditContext,
): Promise<PartnerView | undefined> {
  await checkRoots(services, patch.access);
  return services.db.transaction(async (tx) => {
    const before = await services.partners.getForUpdate(id, tx);
    const record = await services.partners.update(
      id,
      {
        name: patch.name,
        scopes: patch.scopes ? [...new Set(patch.scopes)] : undefined,
        ...(patch.access ? accessFields(patch.access) : {}),
        disabled: patch.disabled,
        rateLimitPerMinute: patch.rateLimitPerMinute,
      },
      tx,
    );
    if (!before || !record) return undefined;
    const [from, to] = [partnerView(before), partnerView(record)];
    const changed = changes(from, to);
    // Disabling is its own action: it is what an operator looks for after an incident.
    if (from.disabled !== to.disabled) {
      await services.audit.record(
        { action: to.disabled ? 'partner.disabled' : 'partner.enabled', partnerId: id },
        ctx,
        tx,
      );
    }
    if (Object.keys(changed).length) {
      await services.audit.record(
        { action: 'partner.updated', partnerId: id, details: { changes: changed } },
        ctx,
        tx,
      );
    }
    return to;
  });
}

export async function rotateSecret(
  services: Services,
  id: string,
  graceSeconds: number,
  ctx: AuditContext,
): Promise<{ id: string; secret: string; previousSecretValidUntil: string | null } | undefined> {
  const secret = generateSecret();
  const found = await services.db.transaction(async (tx) => {
    if (!(await services.partners.get(id, tx))) return false;
    await services.partners.rotateSecret(id, hashSecret(secret), graceSeconds, tx);
    // No graceSeconds means the old secrets stopped working at once.
    await services.audit.record(
      { action: 'partner.secret_rotated', partnerId: id, details: graceSeconds > 0 ? { graceSeconds } : {} },
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

export type { Access };
