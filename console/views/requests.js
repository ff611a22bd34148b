// @ts-check
// Failed partner requests: the log with filters (partner, status, code, route, secret, time) and
// paging, and one request in detail, found by the id a partner quotes.
import { api, query } from '../admin-api.js';
import { instant, localValue, plural, shortId, when } from '../format.js';
import { navigate } from '../redraw.js';
import { announce, attempt, field, filtered, h, select, submitted, table, text } from '../ui.js';

/** @typedef {import('../types.js').RequestRecord} RequestRecord */

/** The filters the log understands, as the hash and the API name them. */
const FILTERS = ['partnerId', 'status', 'code', 'route', 'key', 'since', 'until'];

/**
 * @param {RequestRecord[]} rows
 * @param {boolean} withPartner
 * @param {string} [list] the query of the list they come from: a request's page leads back to it
 */
export function failureTable(rows, withPartner, list = '') {
  return table(
    [
      { label: 'at', class: 'nowrap' },
      ...(withPartner ? ['partner'] : []),
      'request',
      { label: 'status', num: true },
      'code',
      'first issue',
      'key',
      { label: 'request id', class: 'nowrap' },
    ],
    rows.map((f) => [
      when(f.at),
      ...(withPartner
        ? [
            f.partner
              ? h('a', { href: `#/partners/${f.partner.id}` }, f.partner.name ?? f.partner.id)
              : h('span', { class: 'muted' }, 'none'),
          ]
        : []),
      `${f.method} ${f.route}`,
      f.status,
      f.code ?? '',
      f.issues[0]
        ? `${f.issues[0].path}: ${f.issues[0].message}${f.issueCount > 1 ? ` (+${f.issueCount - 1})` : ''}`
        : (f.message ?? ''),
      // A test secret's request (docs/test-mode.md) says so beside which secret it was.
      f.test ? `${f.key ?? ''} (test)` : (f.key ?? ''),
      h(
        'a',
        { href: `#/requests/${encodeURIComponent(f.requestId)}${list}`, class: 'mono', title: f.requestId },
        shortId(f.requestId),
      ),
    ]),
    'No failed requests kept.',
  );
}

/**
 * One failed request, all that is kept of it.
 * @param {string} requestId
 */
async function detail(requestId) {
  /** @type {{data: RequestRecord}} */
  const { data: f } = await api('GET', `/requests/${encodeURIComponent(requestId)}`);
  return h(
    'div',
    { class: 'panel', 'data-request': f.requestId },
    h('h2', {}, `${f.status} ${f.code ?? ''}`),
    h('p', {}, f.message ?? ''),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'request id'),
      h('dd', {}, h('code', {}, f.requestId)),
      h('dt', {}, 'partner'),
      h(
        'dd',
        {},
        f.partner
          ? h('a', { href: `#/partners/${f.partner.id}` }, f.partner.name ?? f.partner.id)
          : 'none identified',
      ),
      h('dt', {}, 'secret'),
      h('dd', {}, f.key ?? 'none'),
      h('dt', {}, 'request'),
      h('dd', {}, `${f.method} ${f.route}`),
      h('dt', {}, 'listing'),
      h('dd', { 'data-listing': '' }, f.listing ?? h('span', { class: 'muted' }, 'none named in the path')),
      h('dt', {}, 'at'),
      h('dd', {}, `${when(f.at)} (${f.durationMs} ms)`),
    ),
    f.issues.length ? h('h3', {}, `Issues (${f.issueCount})`) : null,
    f.issues.length
      ? h(
          'ul',
          {},
          f.issues.map((i) => h('li', {}, h('code', {}, i.path), ` ${i.message}`)),
        )
      : null,
  );
}

/**
 * The search by the id a partner quotes.
 * @param {string | undefined} requestId
 */
function findForm(requestId) {
  return h(
    'form',
    {
      class: 'panel inline',
      role: 'search',
      'aria-label': 'Find a request by its id',
      onsubmit: submitted((f) => {
        const id = text(f, 'id');
        if (id) location.hash = `#/requests/${encodeURIComponent(id)}`;
      }),
    },
    field('Request id (X-Request-Id a partner quotes)', {
      name: 'id',
      value: requestId ?? '',
      size: 40,
      required: true,
    }),
    h('button', { type: 'submit' }, 'Find'),
  );
}

/**
 * @param {string | undefined} requestId
 * @param {URLSearchParams} q
 * @returns {Promise<import('../types.js').Content>}
 */
export async function requests(requestId, q) {
  const find = findForm(requestId);
  const kept = Object.fromEntries(FILTERS.map((k) => [k, q.get(k)]));
  // One request: its page holds it alone (the log it was opened from is a click away, its filters kept).
  if (requestId) {
    const errors = h('div');
    const found = h('div');
    await attempt(errors, async () => {
      found.replaceChildren(await detail(requestId));
    });
    return [
      h('h1', {}, 'Requests'),
      h('p', {}, h('a', { href: `#/requests${query(kept)}` }, '← Failed requests')),
      find,
      errors,
      found,
    ];
  }
  const filterErrors = h('div');
  /** @type {[import('../types.js').RequestPage, {data: import('../types.js').Partner[]}]} */
  const [page, { data: partners }] = await Promise.all([
    filtered(
      api(
        'GET',
        `/requests${query({ ...Object.fromEntries(FILTERS.map((k) => [k, q.get(k)])), cursor: q.get('cursor'), pageSize: 50 })}`,
      ),
      { data: [], meta: { failuresNotKept: 0 }, pagination: { pageSize: 50, hasMore: false } },
      filterErrors,
    ),
    api('GET', '/partners'),
  ]);
  const filters = h(
    'form',
    {
      class: 'panel',
      role: 'search',
      'aria-label': 'Filter failed requests',
      onsubmit: submitted((f) => {
        // The results get the focus, with their count said (the focus went to the page's top).
        navigate(
          `#/requests${query({
            partnerId: text(f, 'partnerId'),
            status: text(f, 'status'),
            code: text(f, 'code'),
            route: text(f, 'route'),
            key: text(f, 'key'),
            since: instant(text(f, 'since')),
            until: instant(text(f, 'until')),
          })}`,
          '[data-results]',
        );
      }),
    },
    h('h2', {}, 'Filter'),
    h(
      'div',
      { class: 'row' },
      select(
        'Partner',
        'partnerId',
        [
          ['', 'every partner'],
          ['none', 'none identified'],
          ...partners.map((p) => /** @type {[string, string]} */ ([p.id, p.name])),
        ],
        q.get('partnerId') ?? '',
      ),
      field('Status (429, 4xx, 5xx)', {
        name: 'status',
        value: q.get('status') ?? '',
        size: 6,
        maxlength: 3,
      }),
      field('Error code', { name: 'code', value: q.get('code') ?? '', size: 18, maxlength: 64 }),
      field('Route (/listings/{listing})', {
        name: 'route',
        value: q.get('route') ?? '',
        size: 22,
        maxlength: 200,
      }),
      select(
        'Secret sent',
        'key',
        [
          ['', 'any'],
          ['current', 'current'],
          ['previous', 'previous'],
          ['retired', 'retired'],
          ['none', 'none identified'],
        ],
        q.get('key') ?? '',
      ),
      field('From', { name: 'since', type: 'datetime-local', value: localValue(q.get('since')) }),
      field('Until', { name: 'until', type: 'datetime-local', value: localValue(q.get('until')) }),
    ),
    h(
      'p',
      {},
      h('button', { type: 'submit' }, 'Apply filters'),
      ' ',
      h('a', { href: '#/requests' }, 'Clear'),
    ),
    filterErrors,
  );
  // Refused filters are said beside them, alone: no "none kept" under them as if they had worked.
  const refused = filterErrors.childElementCount > 0;
  const shown = plural(page.data.length, 'failed request');
  if (!refused && Object.values(kept).some(Boolean)) announce(`${shown} shown.`);
  return [
    h('h1', {}, 'Requests'),
    find,
    filters,
    h(
      'h2',
      { tabindex: -1, 'data-results': '' },
      q.get('cursor') ? 'Failed requests (older page)' : 'Failed requests, newest first',
      refused ? '' : `: ${page.data.length} shown`,
    ),
    page.meta.failuresNotKept
      ? h(
          'p',
          { class: 'warn' },
          `${page.meta.failuresNotKept} more failures were counted but not kept one by one.`,
        )
      : null,
    refused ? null : failureTable(page.data, true, query(kept)),
    h(
      'p',
      { class: 'pager' },
      q.get('cursor') ? h('a', { href: `#/requests${query(kept)}` }, '← Newest') : null,
      ' ',
      page.pagination.nextCursor
        ? h('a', { href: `#/requests${query({ ...kept, cursor: page.pagination.nextCursor })}` }, 'Older →')
        : null,
    ),
  ];
}
