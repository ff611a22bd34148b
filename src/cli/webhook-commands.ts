import type { DeliveryView, EndpointView } from '../domain/shapes/webhooks.js';
import {
  type Command,
  type Context,
  commonUsage,
  integer,
  noPositionals,
  onePositional,
  str,
} from './command.js';
import { json, keyValues, table } from './output.js';

const USAGE = `Usage: forecourt webhooks <command> [options]

Commands:
  list [--partner ID]             every partner's webhook endpoints (or one partner's)
  show ID [--deliveries N]        one endpoint: state, why it is disabled, the delivery in flight,
                                  and its last N delivery attempts (default 10)
  disable ID [--reason TEXT]      stop an endpoint's deliveries; the partner sees the reason and
                                  cannot resume it (only enable can)
  enable ID                       deliver again, from where it stopped
  test ID [--type TYPE]           send a signed ping now and print what the receiver answered
                                  (the endpoint's deliveries are not touched; no disable needed);
                                  --type sends a sample of an event type the endpoint receives
  retry ID                        send the failed delivery an enabled endpoint waits to retry now,
                                  not after its back-off (up to an hour)

${commonUsage()}`;

/** What the admin API answers (its response schemas; operator's view of an endpoint). */
type Endpoint = EndpointView;
type Attempt = DeliveryView;

const idPath = (ctx: Context) =>
  `/webhooks/${encodeURIComponent(onePositional(ctx.positionals, 'endpoint id'))}`;

const state = (e: Endpoint) =>
  e.enabled ? (e.failingSince ? `failing since ${e.failingSince}` : 'delivering') : 'disabled';

function describe(ctx: Context, endpoint: Endpoint): void {
  ctx.io.out(
    keyValues([
      ['id', endpoint.id],
      ['partnerId', endpoint.partnerId],
      ['url', endpoint.url],
      ['description', endpoint.description ?? ''],
      ['filter.status', endpoint.filter.status?.join(', ') ?? 'all'],
      [
        'filter.dealerProfileIds',
        endpoint.filter.dealerProfileIds?.join(', ') ?? "the partner's whole scope",
      ],
      ['state', state(endpoint)],
      ['disabledReason', endpoint.disabledReason ?? ''],
      ['disabledAt', endpoint.disabledAt ?? ''],
      [
        'pendingDelivery',
        endpoint.pendingDelivery
          ? `${endpoint.pendingDelivery.webhookId}, ${endpoint.pendingDelivery.attempt} attempt(s), next at ${endpoint.pendingDelivery.nextAttemptAt}`
          : 'none',
      ],
      ['createdAt', endpoint.createdAt],
      ['updatedAt', endpoint.updatedAt],
    ]),
  );
}

const list: Command = {
  options: { partner: { type: 'string' } },
  async run(ctx) {
    noPositionals(ctx.positionals);
    const partner = str(ctx.values, 'partner');
    const query = partner ? `?partnerId=${encodeURIComponent(partner)}` : '';
    const endpoints = await ctx.client().request<Endpoint[]>('GET', `/webhooks${query}`);
    if (ctx.json) {
      ctx.io.out(json(endpoints));
      return;
    }
    const rows = endpoints.map((e) => [e.id, e.partnerId, e.url, state(e), e.disabledReason ?? '']);
    ctx.io.out(table(['id', 'partnerId', 'url', 'state', 'disabledReason'], rows, 'No webhook endpoints.'));
  },
};

const show: Command = {
  options: { deliveries: { type: 'string' } },
  async run(ctx) {
    const path = idPath(ctx);
    const count = str(ctx.values, 'deliveries');
    const pageSize = count === undefined ? 10 : integer(count, 'deliveries', 1);
    const endpoint = await ctx.client().request<Endpoint>('GET', path);
    const log = await ctx.client().request<Attempt[]>('GET', `${path}/deliveries?pageSize=${pageSize}`);
    if (ctx.json) {
      ctx.io.out(json({ ...endpoint, deliveries: log }));
      return;
    }
    describe(ctx, endpoint);
    ctx.io.out('\nLast delivery attempts, newest first:\n');
    const rows = log.map((a) => [
      a.createdAt,
      a.webhookId,
      a.type,
      a.attempt,
      a.status,
      a.responseCode ?? '',
      a.listingCount,
      `${a.durationMs} ms`,
      a.error ?? '',
    ]);
    ctx.io.out(
      table(
        ['at', 'webhookId', 'type', 'attempt', 'status', 'code', 'listings', 'took', 'error'],
        rows,
        'No attempts yet.',
      ),
    );
  },
};

const disable: Command = {
  options: { reason: { type: 'string' } },
  async run(ctx) {
    const reason = str(ctx.values, 'reason');
    const body = reason === undefined ? {} : { reason };
    const endpoint = await ctx.client().request<Endpoint>('POST', `${idPath(ctx)}/disable`, body);
    if (ctx.json) ctx.io.out(json(endpoint));
    else describe(ctx, endpoint);
  },
};

const enable: Command = {
  options: {},
  async run(ctx) {
    const endpoint = await ctx.client().request<Endpoint>('POST', `${idPath(ctx)}/enable`);
    if (ctx.json) ctx.io.out(json(endpoint));
    else describe(ctx, endpoint);
  },
};

const test: Command = {
  options: { type: { type: 'string' } },
  async run(ctx) {
    const type = str(ctx.values, 'type');
    const query = type === undefined ? '' : `?type=${encodeURIComponent(type)}`;
    const attempt = await ctx.client().request<Attempt>('POST', `${idPath(ctx)}/test${query}`);
    if (ctx.json) {
      ctx.io.out(json(attempt));
      return;
    }
    ctx.io.out(
      keyValues([
        ['status', attempt.status],
        ['responseCode', attempt.responseCode ?? 'none'],
        ['responseBody', attempt.responseBody ?? ''],
        ['error', attempt.error ?? ''],
        ['durationMs', attempt.durationMs],
      ]),
    );
  },
};

const retry: Command = {
  options: {},
  async run(ctx) {
    const endpoint = await ctx.client().request<Endpoint>('POST', `${idPath(ctx)}/retry`);
    if (ctx.json) ctx.io.out(json(endpoint));
    else describe(ctx, endpoint);
  },
};

export const webhookCommands = { usage: USAGE, commands: { list, show, disable, enable, test, retry } };
