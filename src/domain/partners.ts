import type { Services } from '../services.js';
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
): Promise<PartnerView & { secret: string }> {
  await checkRoots(services, input.access);
  const secret = generateSecret();
  const record = await services.db.transaction((tx) =>
    services.partners.create(
      {
        name: input.name,
        scopes: [...new Set(input.scopes ?? DEFAULT_SCOPES)],
        ...(accessFields(input.access) as Required<ReturnType<typeof accessFields>>),
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        secretHash: hashSecret(secret),
      },
      tx,
    ),
  );
  return { ...partnerView(record), secret };
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
): Promise<PartnerView | undefined> {
  await checkRoots(services, patch.access);
  const record = await services.partners.update(id, {
    name: patch.name,
    scopes: patch.scopes ? [...new Set(patch.scopes)] : undefined,
    ...(patch.access ? accessFields(patch.access) : {}),
    disabled: patch.disabled,
    rateLimitPerMinute: patch.rateLimitPerMinute,
  });
  return record ? partnerView(record) : undefined;
}

export async function rotateSecret(
  services: Services,
  id: string,
  graceSeconds: number,
): Promise<{ id: string; secret: string; previousSecretValidUntil: string | null } | undefined> {
  const secret = generateSecret();
  const found = await services.db.transaction(async (tx) => {
    if (!(await services.partners.get(id, tx))) return false;
    await services.partners.rotateSecret(id, hashSecret(secret), graceSeconds, tx);
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
