// @ts-check
// The overview: traffic over the last hour, health, webhooks at a glance.
import { api } from '../admin-api.js';
import { fmt, when } from '../format.js';
import { cards, chart, h, state, table } from '../ui.js';

/** @returns {Promise<import('../types.js').Content>} */
export async function overview() {
  /** @type {{data: import('../types.js').Overview}} */
  const { data } = await api('GET', '/overview');
  const minutes = data.traffic.perMinute;
  /** @param {'requests' | 'clientErrors' | 'serverErrors' | 'rateLimited'} key */
  const sum = (key) => minutes.reduce((n, m) => n + m[key], 0);
  /** @param {boolean} ok */
  const hc = (ok) => state(ok, 'OK', 'failing');
  const { database, replica, rateLimitStore } = data.health;
  const hooks = data.webhooks;
  // Each webhook count opens the list of those endpoints (the "disabled" count linked nowhere).
  /** @param {number} n @param {string} filter */
  const hookLink = (n, filter) => h('a', { href: `#/webhooks?state=${filter}` }, fmt(n));
  return [
    h('h1', {}, 'Overview'),
    cards([
      ['partner requests, last hour', fmt(sum('requests'))],
      [`4xx (${fmt(sum('rateLimited'))} rate-limited)`, fmt(sum('clientErrors'))],
      ['5xx, last hour', fmt(sum('serverErrors')), { class: `n ${sum('serverErrors') ? 'bad' : ''}` }],
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
      ['enabled', hookLink(hooks.enabled, 'enabled')],
      ['failing (retrying)', hookLink(hooks.failing, 'failing')],
      ['delivery in flight', hookLink(hooks.pending, 'pending')],
      ['disabled', hookLink(hooks.disabled, 'disabled'), { 'data-webhooks': 'disabled' }],
    ]),
  ];
}
