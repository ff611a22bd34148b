// @ts-check
// The overview: what needs attention, traffic over the last hour, health, webhooks at a glance.
import { api, query } from '../admin-api.js';
import { fmt, plural, when } from '../format.js';
import { cards, chart, h, state, table } from '../ui.js';

/** @typedef {import('../types.js').Overview} Overview */
/** @typedef {Overview['attention']['items'][number]} Item */

/** @param {Item} item */
const partnerLink = (item) =>
  item.partner ? h('a', { href: `#/partners/${item.partner.id}` }, item.partner.name) : 'a deleted partner';

/** @param {string | null} iso "in 45 minutes", "in 5 hours" */
function fromNow(iso) {
  const minutes = Math.max(0, Math.round((Date.parse(iso ?? '') - Date.now()) / 60_000));
  return minutes < 120 ? `in ${plural(minutes, 'minute')}` : `in ${plural(Math.round(minutes / 60), 'hour')}`;
}

/**
 * One thing to look at, in words, with links to where it is looked into.
 * @param {Item} item
 * @param {string} hourAgo
 */
function itemWords(item, hourAgo) {
  const id = item.partner?.id ?? '';
  switch (item.kind) {
    case 'error_rate': {
      const share = Math.round((100 * (item.failed ?? 0)) / Math.max(1, item.requests ?? 0));
      return [
        partnerLink(item),
        `: ${fmt(item.failed ?? 0)} of ${plural(item.requests ?? 0, 'request')} failed in the last hour (${share}%). See `,
        h('a', { href: `#/requests${query({ partnerId: id, since: hourAgo })}` }, 'its failed requests'),
        '.',
      ];
    }
    case 'grace_ending':
      return [
        partnerLink(item),
        item.verdict === 'moving'
          ? ` still sends its previous secret beside the new one; the previous one stops at ${when(item.at)} (${fromNow(item.at)}).`
          : ` has not moved to its new secret; the previous one stops at ${when(item.at)} (${fromNow(item.at)}).`,
      ];
    case 'retired_secret':
      return [
        partnerLink(item),
        `: a retired secret was tried ${plural(item.requests ?? 0, 'time')} in the last 24 hours, the last in the minute from ${when(item.at)}. See `,
        h('a', { href: `#/requests${query({ partnerId: id, key: 'retired' })}` }, 'those requests'),
        '.',
      ];
    case 'webhook_failing':
      return [
        h('a', { href: `#/webhooks/${item.endpoint?.id}`, class: 'url' }, item.endpoint?.url ?? ''),
        ` deliveries failing since ${when(item.at)} (`,
        partnerLink(item),
        ').',
      ];
    case 'webhook_disabled': {
      const reason = item.reason ?? 'disabled';
      return [
        h('a', { href: `#/webhooks/${item.endpoint?.id}`, class: 'url' }, item.endpoint?.url ?? ''),
        ` ${reason.startsWith('disabled') ? reason : `disabled: ${reason}`} (`,
        partnerLink(item),
        ').',
      ];
    }
  }
}

/**
 * What needs an operator now, most pressing first (docs/operations.md, "What the overview flags").
 * @param {Overview['attention']} attention
 * @param {string} hourAgo
 */
function needsAttention({ items, thresholds: t }, hourAgo) {
  return h(
    'section',
    {
      class: items.length ? 'panel warn-box' : 'panel',
      'aria-labelledby': 'attention-heading',
      'data-attention': '',
    },
    h('h2', { id: 'attention-heading' }, 'Needs attention'),
    items.length
      ? h(
          'ul',
          { class: 'attention' },
          items.map((item) => h('li', { 'data-kind': item.kind }, itemWords(item, hourAgo))),
        )
      : h(
          'p',
          { class: 'muted' },
          `Nothing: no partner failed ${Math.round(t.errorShare * 100)}% of ${t.errorMinRequests} or more requests in the last hour, no grace ends within ${t.graceEndingHours} hours before its partner moved, no retired secret was tried in ${t.retiredHours} hours, no webhook endpoint fails or was disabled.`,
        ),
  );
}

/** @returns {Promise<import('../types.js').Content>} */
export async function overview() {
  /** @type {{data: Overview}} */
  const { data } = await api('GET', '/overview');
  const minutes = data.traffic.perMinute;
  /** @param {'requests' | 'clientErrors' | 'serverErrors' | 'rateLimited'} key */
  const sum = (key) => minutes.reduce((n, m) => n + m[key], 0);
  /** @param {boolean} ok */
  const hc = (ok) => state(ok, 'OK', 'failing');
  const { database, replica, rateLimitStore } = data.health;
  const hooks = data.webhooks;
  const hourAgo = minutes[0]?.minute ?? '';
  /**
   * A count that opens what it counts, named by what it counts (a link named "1" said nothing).
   * @param {number} n
   * @param {string} href
   * @param {string} name
   */
  const countLink = (n, href, name) => h('a', { href, 'aria-label': name }, fmt(n));
  /** @param {number} n @param {string} filter @param {string} what */
  const hookLink = (n, filter, what) =>
    countLink(n, `#/webhooks?state=${filter}`, `${plural(n, 'endpoint')} ${what}`);
  const [c4, c5, limited] = [sum('clientErrors'), sum('serverErrors'), sum('rateLimited')];
  return [
    h('h1', {}, 'Overview'),
    h('p', { class: 'muted', 'data-updated': '' }),
    needsAttention(data.attention, hourAgo),
    cards([
      ['partner requests, last hour', fmt(sum('requests'))],
      [
        `4xx, last hour (${fmt(limited)} rate-limited)`,
        countLink(
          c4,
          `#/requests${query({ status: '4xx', since: hourAgo })}`,
          `${fmt(c4)} 4xx in the last hour: the failed requests`,
        ),
        { class: `n ${c4 ? 'warn' : ''}` },
      ],
      [
        '5xx, last hour',
        countLink(
          c5,
          `#/requests${query({ status: '5xx', since: hourAgo })}`,
          `${fmt(c5)} 5xx in the last hour: the failed requests`,
        ),
        { class: `n ${c5 ? 'bad' : ''}` },
      ],
      ['partners active, last hour', fmt(data.traffic.activePartners)],
    ]),
    h('h2', {}, 'Requests and errors per minute'),
    chart(minutes, {
      label: 'Partner requests and errors per minute over the last hour',
      startOf: (m) => m.minute,
      stepMs: 60_000,
    }),
    h('h2', {}, 'Health'),
    table(
      ['part', 'state', 'detail'],
      [
        [`database (${database.kind})`, hc(database.ok), database.error ?? ''],
        [
          'read replica',
          replica ? hc(replica.ok) : h('span', { class: 'muted' }, 'none configured'),
          replica?.error ?? '',
        ],
        [
          `rate-limit counts (${rateLimitStore.kind})`,
          hc(rateLimitStore.ok),
          rateLimitStore.lastFallbackAt ? `Redis last failed ${when(rateLimitStore.lastFallbackAt)}` : '',
        ],
      ],
      '',
    ),
    h('h2', {}, 'Webhooks ', h('a', { href: '#/webhooks' }, 'all endpoints')),
    cards([
      ['enabled', hookLink(hooks.enabled, 'enabled', 'enabled')],
      ['failing (retrying)', hookLink(hooks.failing, 'failing', 'failing (retrying)')],
      ['delivery in flight', hookLink(hooks.pending, 'pending', 'with a delivery in flight')],
      ['disabled', hookLink(hooks.disabled, 'disabled', 'disabled'), { 'data-webhooks': 'disabled' }],
    ]),
  ];
}
