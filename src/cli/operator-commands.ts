import type { OperatorToken, OperatorWithToken } from '../api/schemas/admin.js';
import { type Command, commonUsage, noPositionals, onePositional } from './command.js';
import { clean, json, table } from './output.js';

const USAGE = `Usage: forecourt operators <command> [options]

Operator tokens: each operator signs in to the admin API, the CLI and the console with a token of
their own, so the audit log says who did what. ADMIN_TOKEN keeps working as the bootstrap.

Commands:
  list                  every token: name, created, last used, revoked (never the tokens)
  create NAME           a new token for NAME, shown only once
  revoke ID             the token stops working at once
  whoami                the operator the current token signs in as

${commonUsage()}`;

type Operator = OperatorToken;

const list: Command = {
  options: {},
  async run(ctx) {
    noPositionals(ctx.positionals);
    const operators = await ctx.client().request<Operator[]>('GET', '/operators');
    if (ctx.json) return ctx.io.out(json(operators));
    const rows = operators.map((o) => [
      o.id,
      o.name,
      o.createdAt,
      o.createdBy,
      o.lastUsedAt ?? 'never',
      o.revokedAt ?? '',
    ]);
    ctx.io.out(
      table(['id', 'name', 'createdAt', 'createdBy', 'lastUsedAt', 'revokedAt'], rows, 'No operator tokens.'),
    );
  },
};

const create: Command = {
  options: {},
  async run(ctx) {
    const name = onePositional(ctx.positionals, 'operator name');
    const created = await ctx.client().request<OperatorWithToken>('POST', '/operators', { name });
    if (ctx.json) return ctx.io.out(json(created));
    ctx.io.out(
      [
        `Created operator token ${clean(created.id)} for ${clean(created.name)}.`,
        '',
        `  Operator token:  ${clean(created.token)}`,
        '',
        '  Store it now: it is shown only once. Sign in with it to the console (/console), or use it',
        '  as ADMIN_TOKEN / --token for this CLI.',
        '',
      ].join('\n'),
    );
  },
};

const revoke: Command = {
  options: {},
  async run(ctx) {
    const id = onePositional(ctx.positionals, 'operator token id');
    const revoked = await ctx.client().request<Operator>('DELETE', `/operators/${encodeURIComponent(id)}`);
    if (ctx.json) return ctx.io.out(json(revoked));
    ctx.io.out(`Revoked ${clean(revoked.name)}'s token (${clean(revoked.id)}) at ${revoked.revokedAt}.\n`);
  },
};

const whoami: Command = {
  options: {},
  async run(ctx) {
    noPositionals(ctx.positionals);
    const me = await ctx.client().request<{ id: string | null; name: string }>('GET', '/operators/me');
    if (ctx.json) return ctx.io.out(json(me));
    ctx.io.out(`${clean(me.name)}${me.id ? ` (${clean(me.id)})` : ' (the bootstrap token)'}\n`);
  },
};

export const operatorCommands = { usage: USAGE, commands: { list, create, revoke, whoami } };
