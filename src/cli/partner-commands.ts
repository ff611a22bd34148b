import type {
  AccessInput,
  PartnerView,
  PartnerWithSecret,
  RotatedSecret,
  RotationView,
} from '../domain/shapes/partners.js';
import type { AdminClient } from './admin-client.js';
import {
  type Command,
  type Context,
  commonUsage,
  type DealerRef,
  type Group,
  idsForCodes,
  integer,
  list,
  noPositionals,
  oneOf,
  onePositional,
  str,
  type Values,
} from './command.js';
import { json, keyValues, secretBlock, table, UsageError } from './output.js';

const USAGE = `Usage: forecourt partners <command> [options]

Commands:
  create --name NAME (--global | --roots ID,... | --root-codes CODE,...) [--scopes S,...] [--rate-limit N]
                                  create a partner and issue its API secret (shown only once)
  list                            list all partners
  get ID                          show one partner (never its secret)
  update ID [--name NAME] [--scopes S,...] [--global | --roots ID,... | --root-codes CODE,...]
            [--disable [--reason TEXT] | --enable] [--rate-limit N|none]
                                  change only the given settings (--reason: why it is disabled,
                                  kept with the partner and in the audit log)
  rotate-secret ID [--grace SECONDS]
                                  issue a new secret; the old one stops working at once,
                                  or after SECONDS (at most 30 days)
  rotation ID                     since the last rotation: requests with the new secret, with the
                                  previous one, with retired ones, and whether the partner moved
  retire-previous-secret ID       end a grace now: the previous secret is refused from now on,
                                  the current one keeps working (check rotation ID says "moved")
  test-secret ID                  issue the partner's test secret (fc_test_…, shown only once):
                                  same scopes and access, test data only; replaces any previous one
  revoke-test-secret ID           revoke the test secret (its test data stays until wiped or expired)

Options:
  --scopes S,...        of read:listings, read:locations, write:listings, manage:webhooks
                        (default on create: read:listings,read:locations)
  --global              the partner sees every dealer profile
  --roots ID,...        the partner sees these dealer profiles and all their descendants
  --root-codes CODE,... the same, by location code
  --rate-limit N|none   requests per minute for this partner (none: the service's default)

${commonUsage()}`;

/** A partner as the admin API answers (its response schema). */
type Partner = PartnerView;
type Access = AccessInput;

const ACCESS_OPTIONS = ['global', 'roots', 'root-codes'];
const SETTINGS = {
  name: { type: 'string' },
  scopes: { type: 'string' },
  global: { type: 'boolean' },
  roots: { type: 'string' },
  'root-codes': { type: 'string' },
  'rate-limit': { type: 'string' },
} as const;

async function accessFrom(ctx: Context): Promise<Access | undefined> {
  switch (oneOf(ctx.values, ACCESS_OPTIONS)) {
    case 'global':
      return { scope: 'global' };
    case 'roots':
      return { scope: 'restricted', rootProfileIds: list(str(ctx.values, 'roots')!, 'roots') };
    case 'root-codes': {
      const codes = list(str(ctx.values, 'root-codes')!, 'root-codes');
      return { scope: 'restricted', rootProfileIds: await idsForCodes(ctx.client(), codes) };
    }
    default:
      return undefined;
  }
}

/** The settings given on the command line, checked before anything is sent. */
function settingsFrom(values: Values): Record<string, unknown> {
  oneOf(values, ACCESS_OPTIONS);
  const body: Record<string, unknown> = {};
  const name = str(values, 'name');
  if (name !== undefined) body.name = name;
  const scopes = str(values, 'scopes');
  if (scopes !== undefined) body.scopes = list(scopes, 'scopes');
  const rateLimit = str(values, 'rate-limit');
  if (rateLimit !== undefined) {
    body.rateLimitPerMinute =
      rateLimit.trim().toLowerCase() === 'none' ? null : integer(rateLimit, 'rate-limit', 1);
  }
  return body;
}

/** Location codes for dealer ids, to show access readably; ids alone if the lookup fails. */
async function dealerCodes(client: AdminClient, partners: Partner[]): Promise<Map<string, string>> {
  if (partners.every((p) => p.access.scope === 'global')) return new Map();
  try {
    const dealers = await client.request<DealerRef[]>('GET', '/dealers');
    return new Map(dealers.map((d) => [d.id, d.locationCode]));
  } catch {
    return new Map();
  }
}

function describeAccess(access: Access, codes: Map<string, string>, max = Number.POSITIVE_INFINITY): string {
  if (access.scope === 'global') return 'global';
  const roots = access.rootProfileIds.map((id) => codes.get(id) ?? id);
  const shown = roots.slice(0, max).join(', ');
  const more = roots.length > max ? ` (+${roots.length - max} more)` : '';
  return `restricted to ${shown}${more}`;
}

async function showPartner(ctx: Context, partner: Partner | PartnerWithSecret): Promise<void> {
  if (ctx.json) {
    ctx.io.out(json(partner));
    return;
  }
  const codes = await dealerCodes(ctx.client(), [partner]);
  ctx.io.out(
    keyValues([
      ['id', partner.id],
      ['name', partner.name],
      ['scopes', partner.scopes.join(', ')],
      ['access', describeAccess(partner.access, codes)],
      ['rateLimitPerMinute', partner.rateLimitPerMinute ?? 'service default'],
      [
        'disabled',
        partner.disabled ? `yes${partner.disabledReason ? `: ${partner.disabledReason}` : ''}` : 'no',
      ],
      [
        'lastUsedAt',
        partner.lastUsedAt ? `${partner.lastUsedAt} (${partner.lastUsedKey ?? 'current'} secret)` : 'never',
      ],
      ...(partner.previousSecretValidUntil
        ? [['previousSecretValidUntil', partner.previousSecretValidUntil] as [string, unknown]]
        : []),
      ['testSecret', partner.testSecretIssuedAt ? `issued ${partner.testSecretIssuedAt}` : 'none'],
      ['createdAt', partner.createdAt],
      ['updatedAt', partner.updatedAt],
    ]),
  );
  if ('secret' in partner) ctx.io.out(secretBlock(partner.secret, partner.id));
}

const idPath = (ctx: Context) =>
  `/partners/${encodeURIComponent(onePositional(ctx.positionals, 'partner id'))}`;

const create: Command = {
  options: SETTINGS,
  async run(ctx) {
    noPositionals(ctx.positionals);
    const settings = settingsFrom(ctx.values);
    if (settings.name === undefined) throw new UsageError('--name is required');
    if (!oneOf(ctx.values, ACCESS_OPTIONS)) {
      throw new UsageError(
        'choose what the partner may see: --global, --roots ID,... or --root-codes CODE,...',
      );
    }
    const body = { ...settings, access: await accessFrom(ctx) };
    await showPartner(ctx, await ctx.client().request<PartnerWithSecret>('POST', '/partners', body));
  },
};

const listPartners: Command = {
  options: {},
  async run(ctx) {
    noPositionals(ctx.positionals);
    const partners = await ctx.client().request<Partner[]>('GET', '/partners');
    if (ctx.json) {
      ctx.io.out(json(partners));
      return;
    }
    const codes = await dealerCodes(ctx.client(), partners);
    const rows = partners.map((p) => [
      p.id,
      p.name,
      p.scopes.join(','),
      describeAccess(p.access, codes, 3),
      p.disabled ? 'yes' : 'no',
      p.lastUsedAt ?? 'never',
    ]);
    ctx.io.out(table(['id', 'name', 'scopes', 'access', 'disabled', 'lastUsedAt'], rows, 'No partners yet.'));
  },
};

const get: Command = {
  options: {},
  async run(ctx) {
    await showPartner(ctx, await ctx.client().request<Partner>('GET', idPath(ctx)));
  },
};

const update: Command = {
  options: {
    ...SETTINGS,
    disable: { type: 'boolean' },
    enable: { type: 'boolean' },
    reason: { type: 'string' },
  },
  async run(ctx) {
    const path = idPath(ctx);
    const body = settingsFrom(ctx.values);
    const toggle = oneOf(ctx.values, ['disable', 'enable']);
    if (toggle) body.disabled = toggle === 'disable';
    const reason = str(ctx.values, 'reason');
    if (reason !== undefined) {
      if (toggle !== 'disable')
        throw new UsageError('--reason goes with --disable (why the partner is disabled)');
      body.disabledReason = reason;
    }
    if (Object.keys(body).length === 0 && !oneOf(ctx.values, ACCESS_OPTIONS)) {
      throw new UsageError('nothing to update: give at least one setting');
    }
    const access = await accessFrom(ctx);
    if (access) body.access = access;
    await showPartner(ctx, await ctx.client().request<Partner>('PATCH', path, body));
  },
};

const rotateSecret: Command = {
  options: { grace: { type: 'string' } },
  async run(ctx) {
    const path = `${idPath(ctx)}/rotate-secret`;
    const grace = str(ctx.values, 'grace');
    const graceSeconds = grace === undefined ? 0 : integer(grace, 'grace', 0);
    const result = await ctx.client().request<RotatedSecret>('POST', path, {
      graceSeconds,
    });
    if (ctx.json) {
      ctx.io.out(json(result));
      return;
    }
    ctx.io.out(`New API secret issued for partner ${result.id}.\n`);
    ctx.io.out(secretBlock(result.secret, result.id));
    ctx.io.out(
      result.previousSecretValidUntil
        ? `The previous secret keeps working until ${result.previousSecretValidUntil}.\n`
        : 'The previous secret no longer works.\n',
    );
  },
};

/** The verdict of GET /partners/{id}/rotation in words (docs/operations.md, "Rotating a secret"). */
const VERDICTS: Record<RotationView['verdict'], string> = {
  never_rotated: 'never rotated',
  not_moved: 'NOT MOVED: no request with the new secret yet',
  moving: 'MOVING: both secrets in use (the previous one after the first request with the new one)',
  moved: 'moved: no request with the previous secret since the first with the new one',
};

const rotation: Command = {
  options: {},
  async run(ctx) {
    const r = await ctx.client().request<RotationView>('GET', `${idPath(ctx)}/rotation`);
    if (ctx.json) {
      ctx.io.out(json(r));
      return;
    }
    const use = (u: RotationView['newSecret']) =>
      u.requests ? `${u.requests} (first ${u.firstAt}, last ${u.lastAt})` : '0';
    ctx.io.out(
      keyValues([
        ['rotatedAt', r.rotatedAt ?? 'never'],
        ['previousSecretValidUntil', r.previousSecretValidUntil ?? 'none works'],
        ['verdict', VERDICTS[r.verdict]],
        ['newSecret', use(r.newSecret)],
        ['previousSecret', use(r.previousSecret)],
        ['retiredSecrets', use(r.retiredSecrets)],
        ['beforeRotation', use(r.beforeRotation)],
      ]),
    );
  },
};

const retirePrevious: Command = {
  options: {},
  async run(ctx) {
    const partner = await ctx.client().request<Partner>('POST', `${idPath(ctx)}/retire-previous-secret`);
    if (ctx.json) ctx.io.out(json(partner));
    else ctx.io.out(`The previous secret of ${partner.name} is retired; its current secret keeps working.\n`);
  },
};

const testSecret: Command = {
  options: {},
  async run(ctx) {
    const result = await ctx
      .client()
      .request<{ id: string; secret: string }>('POST', `${idPath(ctx)}/test-secret`);
    if (ctx.json) {
      ctx.io.out(json(result));
      return;
    }
    ctx.io.out(`Test secret issued for partner ${result.id} (test data only; docs/test-mode.md).\n`);
    ctx.io.out(secretBlock(result.secret, result.id, 'test-secret'));
  },
};

const revokeTestSecret: Command = {
  options: {},
  async run(ctx) {
    const result = await ctx.client().request<{ id: string }>('DELETE', `${idPath(ctx)}/test-secret`);
    if (ctx.json) ctx.io.out(json(result));
    else ctx.io.out(`The test secret of partner ${result.id} is revoked.\n`);
  },
};

export const partnerCommands: Group = {
  usage: USAGE,
  commands: {
    create,
    list: listPartners,
    get,
    update,
    'rotate-secret': rotateSecret,
    rotation,
    'retire-previous-secret': retirePrevious,
    'test-secret': testSecret,
    'revoke-test-secret': revokeTestSecret,
  },
};
