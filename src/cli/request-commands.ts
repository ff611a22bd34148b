import type { OperatorRequestRecord, Usage } from '../api/schemas/requests.js';
import { type Command, commonUsage, integer, noPositionals, onePositional, str } from './command.js';
import { json, keyValues, table } from './output.js';

const USAGE = `Usage: forecourt requests <command> [options]

Partners' failed requests (kept REQUEST_RECORDS_RETENTION_DAYS, default 7) and their usage.

Commands:
  list [options]          failed requests, newest first
      --partner ID          one partner's ("none": requests that named no partner)
      --status S            a status (429) or class (4xx, 5xx)
      --code CODE           an error code (VALIDATION_FAILED)
      --since ISO           at or after this time
      --limit N             at most N (default 50, at most 200)
  show REQUEST_ID         one failed request by the id the partner quotes: whose, and why
  usage PARTNER_ID [--window 24h|7d]
                          requests, errors, rate limits and bulk items per hour (24h) or 6 hours
                          (7d), with the most frequent error codes

${commonUsage()}`;

type Failure = OperatorRequestRecord;

const list: Command = {
  options: {
    partner: { type: 'string' },
    status: { type: 'string' },
    code: { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(ctx) {
    noPositionals(ctx.positionals);
    const query = new URLSearchParams();
    const limit = str(ctx.values, 'limit');
    query.set('pageSize', String(limit === undefined ? 50 : integer(limit, '--limit', 1)));
    for (const [option, param] of [
      ['partner', 'partnerId'],
      ['status', 'status'],
      ['code', 'code'],
      ['since', 'since'],
    ] as const) {
      const value = str(ctx.values, option);
      if (value !== undefined) query.set(param, value);
    }
    const failures = await ctx.client().request<Failure[]>('GET', `/requests?${query}`);
    if (ctx.json) return ctx.io.out(json(failures));
    const rows = failures.map((f) => [
      f.at,
      f.partner?.name ?? f.partner?.id ?? '(none)',
      `${f.method} ${f.route}`,
      f.status,
      f.code ?? '',
      f.issues[0]
        ? `${f.issues[0].path}: ${f.issues[0].message}${f.issueCount > 1 ? ` (+${f.issueCount - 1})` : ''}`
        : '',
      f.requestId,
    ]);
    ctx.io.out(
      table(
        ['at', 'partner', 'request', 'status', 'code', 'first issue', 'requestId'],
        rows,
        'No failed requests.',
      ),
    );
  },
};

const show: Command = {
  options: {},
  async run(ctx) {
    const id = onePositional(ctx.positionals, 'request id');
    const f = await ctx.client().request<Failure>('GET', `/requests/${encodeURIComponent(id)}`);
    if (ctx.json) return ctx.io.out(json(f));
    ctx.io.out(
      keyValues([
        ['requestId', f.requestId],
        ['at', f.at],
        ['partner', f.partner ? `${f.partner.name ?? '(deleted)'} (${f.partner.id})` : '(none identified)'],
        ['key', f.key ?? ''],
        ['request', `${f.method} ${f.route}`],
        ['answer', `${f.status} ${f.code ?? ''}`],
        ['message', f.message ?? ''],
        ...f.issues.map((issue, i): [string, unknown] => [
          `issue ${i + 1}`,
          `${issue.path}: ${issue.message}`,
        ]),
        ...(f.issueCount > f.issues.length
          ? [['issues', `${f.issueCount} in all`] as [string, unknown]]
          : []),
        ['durationMs', f.durationMs],
      ]),
    );
  },
};

const usage: Command = {
  options: { window: { type: 'string' } },
  async run(ctx) {
    const id = onePositional(ctx.positionals, 'partner id');
    const window = str(ctx.values, 'window') ?? '24h';
    const data = await ctx
      .client()
      .request<Usage>(
        'GET',
        `/partners/${encodeURIComponent(id)}/usage?window=${encodeURIComponent(window)}`,
      );
    if (ctx.json) return ctx.io.out(json(data));
    const t = data.totals;
    ctx.io.out(
      `${data.window}: ${t.requests} requests, ${t.clientErrors} 4xx (${t.rateLimited} rate-limited), ${t.serverErrors} 5xx, ${t.itemsWritten} bulk items written, ${t.itemsFailed} refused${t.failuresNotKept ? `, ${t.failuresNotKept} failures not kept one by one` : ''}\n\n`,
    );
    const rows = data.buckets
      .filter((b) => (b.requests ?? 0) > 0)
      .map((b) => [b.start, b.requests, b.clientErrors, b.serverErrors, b.rateLimited, b.itemsWritten]);
    ctx.io.out(
      table(['from', 'requests', '4xx', '5xx', '429', 'items written'], rows, 'No requests in this window.'),
    );
    if (data.topErrorCodes.length)
      ctx.io.out(
        `\n${table(
          ['code', 'status', 'count'],
          data.topErrorCodes.map((c) => [c.code, c.status, c.count]),
          '',
        )}`,
      );
  },
};

export const requestCommands = { usage: USAGE, commands: { list, show, usage } };
