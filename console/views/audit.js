// @ts-check
// The audit log: who did what, filtered by operator, action and time, with each change written
// "field: old → new" (dealer ids named by their location code).
import { api, query } from '../admin-api.js';
import { dealerLabel, instant, localValue, plural, shortId, when } from '../format.js';
import { navigate } from '../redraw.js';
import { field, filtered, h, select, submitted, table, text } from '../ui.js';

/** @typedef {import('../types.js').AuditEntry} AuditEntry */

/** The filters, as the hash and the API name them. */
const FILTERS = ['actor', 'operator', 'action', 'since', 'until'];

/** @type {[string, string][]} Kinds of actor, as the API names them and in words. */
const ACTORS = [
  ['', 'anyone'],
  ['operator', 'operators'],
  ['partner', 'partners (their webhooks)'],
  ['service', 'the service itself'],
  ['anonymous', 'failed sign-ins'],
];

const ACTIONS = [
  'partner.',
  'partner.created',
  'partner.updated',
  'partner.disabled',
  'partner.enabled',
  'partner.secret_rotated',
  'partner.previous_secret_retired',
  'partner.test_secret_issued',
  'partner.test_secret_revoked',
  'dealer.',
  'dealers.imported',
  'operator.',
  'webhook.',
  'auth.failed',
];

/**
 * A value in words: ids of dealers by their code and name, lists joined, nothing as "none".
 * @param {unknown} value
 * @param {Map<string, import('../types.js').Dealer>} dealers
 * @returns {string}
 */
function words(value, dealers) {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length ? value.map((v) => words(v, dealers)).join(', ') : 'none';
  if (typeof value === 'string') {
    const d = dealers.get(value);
    return d ? dealerLabel(d) : value;
  }
  if (typeof value === 'object') {
    const o = /** @type {Record<string, unknown>} */ (value);
    // An access: "global", or "restricted: roots".
    if (o.scope === 'global') return 'global';
    if (o.scope === 'restricted') return `restricted to ${words(o.rootProfileIds, dealers)}`;
    // A dealer profile written whole (older dealer.updated entries): by its code.
    if (typeof o.locationCode === 'string') return o.locationCode;
    return Object.entries(o)
      .map(([k, v]) => `${k} ${words(v, dealers)}`)
      .join('; ');
  }
  return String(value);
}

/** @param {number} seconds "1 hour", "90 minutes", "7 days" */
const duration = (seconds) =>
  seconds % 86_400 === 0
    ? plural(seconds / 86_400, 'day')
    : seconds % 3600 === 0
      ? plural(seconds / 3600, 'hour')
      : plural(Math.round(seconds / 60), 'minute');

/**
 * An entry's details as a list: each change "field: old → new", each other detail "name: value";
 * what an action means said in words (a rotation with no grace), an endpoint by its URL.
 * @param {AuditEntry} entry
 * @param {Map<string, import('../types.js').Dealer>} dealers
 * @param {Map<string, string>} endpoints webhook endpoint id → URL
 */
function detailList(entry, dealers, endpoints) {
  const details = { ...entry.details };
  const items = [];
  if (entry.action === 'partner.secret_rotated') {
    const grace = Number(details.graceSeconds ?? 0);
    items.push(
      h(
        'li',
        {},
        grace > 0
          ? `the previous secret kept working for ${duration(grace)}`
          : 'the previous secret stopped at once (no grace)',
      ),
    );
    delete details.graceSeconds;
  }
  if (entry.action === 'partner.previous_secret_retired' && typeof details.graceWasUntil === 'string') {
    items.push(h('li', {}, `grace ended early: it was to last until ${when(details.graceWasUntil)}`));
    delete details.graceWasUntil;
  }
  if (typeof details.endpointId === 'string') {
    const id = details.endpointId;
    const url = typeof details.url === 'string' ? details.url : endpoints.get(id);
    items.push(
      h(
        'li',
        {},
        h('strong', {}, 'endpoint'),
        ': ',
        h('a', { href: `#/webhooks/${id}`, class: 'url' }, url ?? 'a deleted endpoint'),
      ),
    );
    delete details.endpointId;
    delete details.url;
  }
  for (const [key, value] of Object.entries(details)) {
    if (key === 'changes' && value && typeof value === 'object') {
      const changes = /** @type {Record<string, {from?: unknown, to?: unknown}>} */ (value);
      for (const [name, change] of Object.entries(changes)) {
        // The parent said once, by its code.
        if (name === 'parentId' && changes.parent) continue;
        items.push(
          h(
            'li',
            {},
            h('strong', {}, name),
            `: ${words(change?.from, dealers)} → ${words(change?.to, dealers)}`,
          ),
        );
      }
    } else items.push(h('li', {}, h('strong', {}, key), `: ${words(value, dealers)}`));
  }
  return items.length ? h('ul', { class: 'details' }, items) : '';
}

/**
 * @param {URLSearchParams} q
 * @returns {Promise<import('../types.js').Content>}
 */
export async function audit(q) {
  const filters = Object.fromEntries(FILTERS.map((k) => [k, q.get(k)]));
  const filterErrors = h('div');
  /** @type {[{data: AuditEntry[], pagination: {nextBefore: string | null}}, {data: import('../types.js').Dealer[]}, {data: import('../types.js').WebhookEndpoint[]}]} */
  const [page, { data: dealerList }, { data: endpointList }] = await Promise.all([
    filtered(
      api('GET', `/audit-log${query({ ...filters, before: q.get('before'), limit: 50 })}`),
      { data: [], pagination: { nextBefore: null } },
      filterErrors,
    ),
    api('GET', '/dealers'),
    api('GET', '/webhooks'),
  ]);
  const dealers = new Map(dealerList.map((d) => [d.id, d]));
  const endpoints = new Map(endpointList.map((e) => [e.id, e.url]));
  const refused = filterErrors.childElementCount > 0;
  /** @param {AuditEntry} e */
  const subject = (e) =>
    e.partnerId
      ? h('a', { href: `#/partners/${e.partnerId}` }, e.partnerName ?? e.partnerId)
      : e.dealerId
        ? h('a', { href: `#/dealers/${e.dealerId}` }, e.dealerCode ?? e.dealerId)
        : '';
  const form = h(
    'form',
    {
      class: 'panel',
      role: 'search',
      'aria-label': 'Filter the audit log',
      onsubmit: submitted((f) => {
        navigate(
          `#/audit${query({
            actor: text(f, 'actor'),
            operator: text(f, 'operator'),
            action: text(f, 'action'),
            since: instant(text(f, 'since')),
            until: instant(text(f, 'until')),
          })}`,
          '[data-results]',
        );
      }),
    },
    h(
      'div',
      { class: 'row' },
      select('Who', 'actor', ACTORS, filters.actor ?? ''),
      field('Operator (name, or ADMIN_TOKEN)', {
        name: 'operator',
        value: filters.operator ?? '',
        maxlength: 100,
      }),
      select(
        'Action',
        'action',
        [
          ['', 'any'],
          ...ACTIONS.map((a) => /** @type {[string, string]} */ ([a, a.endsWith('.') ? `${a}*` : a])),
        ],
        filters.action ?? '',
      ),
      field('From', { name: 'since', type: 'datetime-local', value: localValue(filters.since ?? null) }),
      field('Until', { name: 'until', type: 'datetime-local', value: localValue(filters.until ?? null) }),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Apply filters'), ' ', h('a', { href: '#/audit' }, 'Clear')),
    filterErrors,
  );
  return [
    h('h1', {}, 'Audit log'),
    form,
    h(
      'h2',
      { tabindex: -1, 'data-results': '' },
      refused ? 'Entries' : `Entries, newest first: ${page.data.length} shown`,
    ),
    refused
      ? null
      : table(
          [
            { label: 'at', class: 'nowrap' },
            'who',
            'action',
            'subject',
            'details',
            { label: 'request id', class: 'nowrap' },
          ],
          page.data.map((e) => [
            when(e.at),
            e.operator ?? e.actor,
            e.action,
            subject(e),
            detailList(e, dealers, endpoints),
            e.requestId ? h('span', { class: 'mono', title: e.requestId }, shortId(e.requestId)) : '',
          ]),
          'No entries.',
        ),
    page.pagination.nextBefore
      ? h(
          'p',
          {},
          h(
            'a',
            { href: `#/audit${query({ ...filters, before: page.pagination.nextBefore })}` },
            'Older entries →',
          ),
        )
      : null,
  ];
}
