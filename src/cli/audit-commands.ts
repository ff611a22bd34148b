import type { AuditEntry } from '../api/schemas/admin.js';
import { type Command, commonUsage, type Group, integer, noPositionals, str } from './command.js';
import { json, table } from './output.js';

const USAGE = `Usage: forecourt audit-log [options]

Shows the audit log, newest first: operator actions (partners and dealer profiles created or
changed, secrets rotated, partners disabled) and failed partner authentications.

Options:
  --partner ID      entries about this partner
  --operator NAME   actions of this operator (a token's name, or ADMIN_TOKEN)
  --action A        one action (partner.created, auth.failed, ...) or a prefix ending in "." (partner.)
  --since ISO       entries at or after this time (2026-11-22 or 2026-11-22T10:00:00Z)
  --until ISO       entries before this time
  --limit N         at most N entries (default 50, at most 500)

${commonUsage('print the entries as JSON')}`;

type Entry = AuditEntry;

const show: Command = {
  options: {
    partner: { type: 'string' },
    operator: { type: 'string' },
    action: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(ctx) {
    noPositionals(ctx.positionals);
    const query = new URLSearchParams();
    const limit = str(ctx.values, 'limit');
    query.set('limit', String(limit === undefined ? 50 : integer(limit, '--limit', 1)));
    for (const [option, param] of [
      ['partner', 'partnerId'],
      ['operator', 'operator'],
      ['action', 'action'],
      ['since', 'since'],
      ['until', 'until'],
    ] as const) {
      const value = str(ctx.values, option);
      if (value !== undefined) query.set(param, value);
    }
    const entries = await ctx.client().request<Entry[]>('GET', `/audit-log?${query}`);
    if (ctx.json) {
      ctx.io.out(json(entries));
      return;
    }
    const rows = entries.map((e) => [
      e.at,
      e.action,
      e.partnerId ?? e.dealerId ?? '',
      e.clientIp ?? '',
      JSON.stringify(e.details),
      e.requestId ?? '',
    ]);
    ctx.io.out(table(['at', 'action', 'subject', 'client', 'details', 'requestId'], rows, 'No entries.'));
  },
};

/** `forecourt audit-log`: one command, run as the group's only one. */
export const auditCommands: Group = { usage: USAGE, commands: { show } };
