// The operator's console: one page, hash routes, the admin API of this same service.
// Text from the API is only ever set as text (never as HTML): a partner or dealer name is data.
const API = '/api/admin/v1';
const TOKEN_KEY = 'forecourt.operatorToken';
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let refreshTimer;

/** An element: h('a', { href: '#/', class: 'x', onclick: fn }, 'text', child, …). */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const svg = (tag, attrs = {}) => {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
};

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code;
    this.issues = body?.error?.issues ?? [];
    this.requestId = body?.error?.requestId;
  }
}

async function api(method, path, body) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(`${API}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401 && path !== '/operators/me') {
    signOut(
      'Your token was refused (revoked, or the service restarted with another ADMIN_TOKEN): sign in again.',
    );
  }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

function toast(message) {
  const el = document.getElementById('toast');
  el.textContent = message;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => {
    el.textContent = '';
  }, 6000);
}

/** What went wrong, with every issue: shown next to the form that caused it. */
function errorBox(error) {
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('p', {}, `${error.code ? `${error.code}: ` : ''}${error.message}`),
    error.issues?.length
      ? h(
          'ul',
          {},
          error.issues.map((i) => h('li', {}, `${i.path}: ${i.message}`)),
        )
      : null,
  );
}

/** A labelled input: the label's text is its accessible name. */
const field = (label, attrs) => h('label', {}, label, h('input', attrs));

/** A form's submit handler: the browser's own submission is stopped. */
const submitted = (handler) => (event) => {
  event.preventDefault();
  handler(event);
};

/** Runs an action from a form; errors appear in `slot`, never lost. */
async function attempt(slot, action) {
  slot.replaceChildren();
  try {
    await action();
  } catch (error) {
    slot.replaceChildren(errorBox(error));
  }
}

const fmt = (n) => Number(n).toLocaleString('en');
/** When a partner last used a secret, and which one (after a rotation, whether it moved on). */
const lastUse = (p) =>
  p.lastUsedAt
    ? `${new Date(p.lastUsedAt).toLocaleString()}${p.lastUsedKey === 'previous' ? ' (previous secret)' : ''}`
    : 'never';
const when = (iso) => (iso ? new Date(iso).toLocaleString() : 'never');
const table = (headers, rows, empty) =>
  rows.length
    ? h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              headers.map((x) => h('th', { scope: 'col', class: x.num ? 'num' : null }, x.label ?? x)),
            ),
          ),
          h(
            'tbody',
            {},
            rows.map((cells) =>
              h(
                'tr',
                {},
                cells.map((c, i) => h('td', { class: headers[i].num ? 'num' : null }, c)),
              ),
            ),
          ),
        ),
      )
    : h('p', { class: 'muted' }, empty);

/** Bars of requests with their errors on top, one per bucket. */
function chart(buckets, label) {
  const width = 600;
  const height = 150;
  const max = Math.max(1, ...buckets.map((b) => b.requests));
  const w = width / buckets.length;
  const el = svg('svg', {
    class: 'chart',
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': label,
    preserveAspectRatio: 'none',
  });
  buckets.forEach((b, i) => {
    const rh = (b.requests / max) * (height - 4);
    const eh = ((b.clientErrors + b.serverErrors) / max) * (height - 4);
    el.append(
      svg('rect', { class: 'req', x: i * w + 1, y: height - rh, width: Math.max(1, w - 2), height: rh }),
    );
    if (eh > 0)
      el.append(
        svg('rect', { class: 'err', x: i * w + 1, y: height - eh, width: Math.max(1, w - 2), height: eh }),
      );
  });
  return h(
    'figure',
    { class: 'panel' },
    el,
    h(
      'figcaption',
      { class: 'legend' },
      h('span', {}, 'requests'),
      h('span', { class: 'e' }, 'errors (4xx, 5xx)'),
    ),
  );
}

function secretBox(title, secret, note) {
  const code = h('code', { class: 'mono' }, secret);
  return h(
    'div',
    { class: 'secret', role: 'status' },
    h('strong', {}, title),
    h('p', {}, code),
    h('p', {}, note),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => navigator.clipboard?.writeText(secret).then(() => toast('Copied.')),
      },
      'Copy',
    ),
  );
}

// ---- Views ------------------------------------------------------------------------------------

async function overview() {
  const { data } = await api('GET', '/overview');
  const minutes = data.traffic.perMinute;
  const sum = (key) => minutes.reduce((n, m) => n + m[key], 0);
  const hc = (ok) => (ok ? h('span', { class: 'ok' }, 'OK') : h('span', { class: 'bad' }, 'failing'));
  const { database, replica, rateLimitStore } = data.health;
  return [
    h('h1', {}, 'Overview'),
    h(
      'div',
      { class: 'cards' },
      h(
        'div',
        { class: 'card' },
        h('div', { class: 'n' }, fmt(sum('requests'))),
        h('div', { class: 'l' }, 'partner requests, last hour'),
      ),
      h(
        'div',
        { class: 'card' },
        h('div', { class: 'n' }, fmt(sum('clientErrors'))),
        h('div', { class: 'l' }, `4xx (${fmt(sum('rateLimited'))} rate-limited)`),
      ),
      h(
        'div',
        { class: 'card' },
        h('div', { class: `n ${sum('serverErrors') ? 'bad' : ''}` }, fmt(sum('serverErrors'))),
        h('div', { class: 'l' }, '5xx, last hour'),
      ),
      h(
        'div',
        { class: 'card' },
        h('div', { class: 'n' }, fmt(data.traffic.activePartners)),
        h('div', { class: 'l' }, 'partners active, last hour'),
      ),
    ),
    h('h2', {}, 'Requests and errors per minute'),
    chart(minutes, 'Partner requests and errors per minute over the last hour'),
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
    h('h2', {}, 'Webhooks'),
    h(
      'div',
      { class: 'cards' },
      ...[
        ['enabled', data.webhooks.enabled],
        ['failing (retrying)', data.webhooks.failing],
        ['delivery in flight', data.webhooks.pending],
        ['disabled', data.webhooks.disabled],
      ].map(([label, n]) =>
        h('div', { class: 'card' }, h('div', { class: 'n' }, fmt(n)), h('div', { class: 'l' }, label)),
      ),
    ),
  ];
}

const SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'];

async function partners() {
  const [{ data: list }, { data: dealers }] = await Promise.all([
    api('GET', '/partners'),
    api('GET', '/dealers'),
  ]);
  const codeOf = new Map(dealers.map((d) => [d.id, d.locationCode]));
  const result = h('div');
  const errors = h('div');
  const rootSelect = h(
    'select',
    { id: 'new-roots', name: 'roots', multiple: true, size: Math.min(8, Math.max(3, dealers.length)) },
    dealers
      .slice()
      .sort((a, b) => a.locationCode.localeCompare(b.locationCode))
      .map((d) =>
        h('option', { value: d.id }, `${d.locationCode}${d.displayName ? ` · ${d.displayName}` : ''}`),
      ),
  );
  const form = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((event) => {
        const f = new FormData(event.target);
        const roots = [...rootSelect.selectedOptions].map((o) => o.value);
        void attempt(errors, async () => {
          const { data } = await api('POST', '/partners', {
            name: f.get('name'),
            scopes: f.getAll('scope'),
            access:
              f.get('access') === 'global'
                ? { scope: 'global' }
                : { scope: 'restricted', rootProfileIds: roots },
            ...(f.get('rateLimit') ? { rateLimitPerMinute: Number(f.get('rateLimit')) } : {}),
          });
          result.replaceChildren(
            secretBox(
              `API secret of ${data.name}`,
              data.secret,
              'Shown only now: hand it to the partner over a safe channel. If it is lost, rotate it.',
            ),
            h('p', {}, h('a', { href: `#/partners/${data.id}` }, `Open ${data.name}`)),
          );
          event.target.reset();
        });
      }),
    },
    h('h2', {}, 'New partner'),
    h(
      'div',
      { class: 'row' },
      field('Name', { name: 'name', required: true, maxlength: 200 }),
      field('Rate limit (requests a minute; empty: the default)', {
        name: 'rateLimit',
        type: 'number',
        min: 1,
      }),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Scopes'),
      SCOPES.map((s) =>
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', name: 'scope', value: s, checked: s.startsWith('read:') }),
          ` ${s}`,
        ),
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Access'),
      h(
        'label',
        { class: 'check' },
        h('input', { type: 'radio', name: 'access', value: 'restricted', checked: true }),
        ' these dealer profiles and everything under them:',
      ),
      h('label', { for: 'new-roots' }, 'Roots (pick one or more; Ctrl or ⌘ for several)'),
      rootSelect,
      h(
        'label',
        { class: 'check' },
        h('input', { type: 'radio', name: 'access', value: 'global' }),
        ' global: every dealer',
      ),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Create partner')),
    errors,
  );
  const rows = list.map((p) => [
    h('a', { href: `#/partners/${p.id}` }, p.name),
    p.scopes.join(', '),
    p.access.scope === 'global'
      ? 'global'
      : p.access.rootProfileIds.map((id) => codeOf.get(id) ?? id).join(', '),
    p.rateLimitPerMinute ?? 'default',
    lastUse(p),
    p.disabled ? h('span', { class: 'bad' }, 'disabled') : h('span', { class: 'ok' }, 'active'),
  ]);
  return [
    h('h1', {}, 'Partners'),
    result,
    table(
      ['name', 'scopes', 'access', { label: 'rate limit', num: true }, 'last used', 'state'],
      rows,
      'No partners yet.',
    ),
    form,
  ];
}

async function partner(id, window = '24h') {
  const [{ data: p }, { data: usage }, failures] = await Promise.all([
    api('GET', `/partners/${id}`),
    api('GET', `/partners/${id}/usage?window=${window}`),
    api('GET', `/requests?partnerId=${id}&pageSize=20`),
  ]);
  const out = h('div');
  const errors = h('div');
  const act = (action) => attempt(errors, action);
  const rotate = h(
    'form',
    {
      class: 'inline',
      onsubmit: submitted((event) => {
        const grace = Number(new FormData(event.target).get('grace'));
        void act(async () => {
          const { data } = await api('POST', `/partners/${id}/rotate-secret`, { graceSeconds: grace });
          out.replaceChildren(
            secretBox(
              `New API secret of ${p.name}`,
              data.secret,
              data.previousSecretValidUntil
                ? `The previous secret keeps working until ${when(data.previousSecretValidUntil)}; then it is refused (and shows as "retired" in the failed requests).`
                : 'The previous secret stopped working now.',
            ),
          );
        });
      }),
    },
    h(
      'label',
      {},
      'Previous secret keeps working for',
      h(
        'select',
        { name: 'grace' },
        [
          ['0', 'no time: stop it now'],
          ['3600', '1 hour'],
          ['86400', '24 hours'],
          ['604800', '7 days'],
        ].map(([v, l]) => h('option', { value: v }, l)),
      ),
    ),
    h('button', { type: 'submit' }, 'Rotate secret'),
  );
  const limit = h(
    'form',
    {
      class: 'inline',
      onsubmit: submitted((event) => {
        const value = new FormData(event.target).get('limit');
        void act(async () => {
          await api('PATCH', `/partners/${id}`, { rateLimitPerMinute: value ? Number(value) : null });
          toast('Rate limit saved.');
          await render();
        });
      }),
    },
    field('Rate limit (requests a minute; empty: the default)', {
      name: 'limit',
      type: 'number',
      min: 1,
      value: p.rateLimitPerMinute ?? '',
    }),
    h('button', { type: 'submit', class: 'secondary' }, 'Save limit'),
  );
  const toggle = p.disabled
    ? h(
        'button',
        {
          type: 'button',
          onclick: () =>
            void act(async () => {
              await api('PATCH', `/partners/${id}`, { disabled: false });
              toast('Enabled.');
              await render();
            }),
        },
        'Enable partner',
      )
    : h(
        'form',
        {
          class: 'inline',
          onsubmit: submitted((event) => {
            const reason = new FormData(event.target).get('reason').trim();
            if (!confirm(`Disable ${p.name}? Every request with its secrets is refused until you enable it.`))
              return;
            void act(async () => {
              await api('PATCH', `/partners/${id}`, {
                disabled: true,
                ...(reason ? { disabledReason: reason } : {}),
              });
              toast('Disabled.');
              await render();
            });
          }),
        },
        field('Why (kept with the partner and in the audit log)', {
          name: 'reason',
          maxlength: 500,
          size: 40,
        }),
        h('button', { type: 'submit', class: 'danger' }, 'Disable partner'),
      );
  const t = usage.totals;
  return [
    h('p', {}, h('a', { href: '#/partners' }, '← Partners')),
    h('h1', {}, p.name, ' ', p.disabled ? h('span', { class: 'bad' }, '(disabled)') : null),
    p.disabled
      ? h(
          'p',
          { class: 'bad', 'data-disabled': '' },
          `Disabled${p.disabledReason ? `: ${p.disabledReason}` : ' (no reason given)'}.`,
        )
      : null,
    h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: () => render() }, 'Refresh')),
    h(
      'p',
      { class: 'muted' },
      `Scopes ${p.scopes.join(', ')} · access ${p.access.scope} · last used ${lastUse(p)} · id `,
      h('code', {}, p.id),
    ),
    p.previousSecretValidUntil
      ? h(
          'p',
          { class: 'warn', 'data-grace': '' },
          `The previous secret works until ${when(p.previousSecretValidUntil)}. ${
            p.lastUsedKey === 'previous'
              ? 'The partner still used it last: it has not moved to the new secret yet.'
              : 'The partner used the new secret last.'
          }`,
        )
      : null,
    h('div', { class: 'panel' }, rotate, h('hr'), limit, h('hr'), toggle, errors),
    out,
    h(
      'h2',
      {},
      `Usage, ${window === '24h' ? 'last 24 hours (hourly)' : 'last 7 days (6-hourly)'} `,
      h(
        'a',
        { href: `#/partners/${id}?window=${window === '24h' ? '7d' : '24h'}` },
        window === '24h' ? 'show 7 days' : 'show 24 hours',
      ),
    ),
    h(
      'div',
      { class: 'cards' },
      ...[
        ['requests', t.requests],
        ['4xx', t.clientErrors],
        ['5xx', t.serverErrors],
        ['rate-limited', t.rateLimited],
        ['bulk items written', t.itemsWritten],
        ['bulk items refused', t.itemsFailed],
      ].map(([label, n]) =>
        h(
          'div',
          { class: 'card' },
          h('div', { class: 'n', 'data-total': label }, fmt(n)),
          h('div', { class: 'l' }, label),
        ),
      ),
    ),
    chart(usage.buckets, `Requests and errors of ${p.name}`),
    t.failuresNotKept
      ? h(
          'p',
          { class: 'warn' },
          `${fmt(t.failuresNotKept)} failures were counted but not kept one by one (over the per-minute limit).`,
        )
      : null,
    h('h2', {}, 'Top error codes'),
    table(
      ['code', { label: 'status', num: true }, { label: 'count', num: true }],
      usage.topErrorCodes.map((c) => [c.code, c.status, fmt(c.count)]),
      'No errors in this window.',
    ),
    h('h2', {}, 'Recent failed requests'),
    failureTable(failures.data, false),
  ];
}

function failureTable(rows, withPartner) {
  return table(
    [
      'at',
      ...(withPartner ? ['partner'] : []),
      'request',
      { label: 'status', num: true },
      'code',
      'first issue',
      'key',
      'request id',
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
      f.key ?? '',
      h('a', { href: `#/requests/${encodeURIComponent(f.requestId)}`, class: 'mono' }, f.requestId),
    ]),
    'No failed requests kept.',
  );
}

async function requests(requestId) {
  const errors = h('div');
  const detail = h('div');
  const find = h(
    'form',
    {
      class: 'panel inline',
      role: 'search',
      onsubmit: submitted((event) => {
        const id = new FormData(event.target).get('id').trim();
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
  if (requestId) {
    await attempt(errors, async () => {
      const { data: f } = await api('GET', `/requests/${encodeURIComponent(requestId)}`);
      detail.replaceChildren(
        h(
          'div',
          { class: 'panel', 'data-request': f.requestId },
          h('h2', {}, `${f.status} ${f.code ?? ''}`),
          h('p', {}, f.message ?? ''),
          h(
            'dl',
            {},
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
        ),
      );
    });
  }
  const { data: recent } = await api('GET', '/requests?pageSize=30');
  return [
    h('h1', {}, 'Requests'),
    find,
    errors,
    detail,
    h('h2', {}, 'Recent failed requests, every partner'),
    failureTable(recent, true),
  ];
}

async function dealers() {
  const { data: list } = await api('GET', '/dealers');
  const errors = h('div');
  const byParent = new Map();
  for (const d of list) {
    const key = d.parentId ?? '';
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(d);
  }
  for (const children of byParent.values())
    children.sort((a, b) => a.locationCode.localeCompare(b.locationCode));
  const search = h('input', {
    type: 'search',
    name: 'q',
    'aria-label': 'Search dealer profiles by code, name or city',
    placeholder: 'Search code, name, city',
  });
  const treeHolder = h('div', { class: 'panel' });
  const matches = (d, q) =>
    [d.locationCode, d.displayName, d.companyName, d.city].some((v) => v?.toLowerCase().includes(q));
  const drawTree = () => {
    const q = search.value.trim().toLowerCase();
    const keep = (d) => !q || matches(d, q) || (byParent.get(d.id) ?? []).some(keep);
    const branch = (parent) => {
      const children = (byParent.get(parent) ?? []).filter(keep);
      if (!children.length) return null;
      return h(
        'ul',
        { class: parent ? 'tree' : 'tree root' },
        children.map((d) =>
          h(
            'li',
            {},
            h('a', { href: `#/dealers/${d.id}` }, d.locationCode),
            ` ${d.displayName ?? d.companyName ?? ''}`,
            d.city ? h('span', { class: 'muted' }, ` · ${d.city}`) : null,
            branch(d.id),
          ),
        ),
      );
    };
    treeHolder.replaceChildren(
      branch('') ?? h('p', { class: 'muted' }, q ? 'Nothing matches.' : 'No dealer profiles yet.'),
    );
  };
  search.addEventListener('input', drawTree);
  drawTree();
  const create = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((event) => {
        const f = new FormData(event.target);
        void attempt(errors, async () => {
          const { data } = await api('POST', '/dealers', {
            locationCode: f.get('code'),
            ...(f.get('parent') ? { parentLocationCode: f.get('parent') } : {}),
            ...(f.get('name') ? { displayName: f.get('name') } : {}),
            ...(f.get('city') ? { city: f.get('city') } : {}),
          });
          toast(`Created ${data.locationCode}.`);
          await render();
        });
      }),
    },
    h('h2', {}, 'New location'),
    h(
      'div',
      { class: 'row' },
      field('Location code', { name: 'code', required: true, maxlength: 64 }),
      field('Parent location code (empty: a group at the top)', { name: 'parent', maxlength: 64 }),
      field('Display name', { name: 'name', maxlength: 200 }),
      field('City', { name: 'city', maxlength: 100 }),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Create location')),
  );
  const importForm = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((event) => {
        const text = new FormData(event.target).get('tree');
        void attempt(errors, async () => {
          let dealersJson;
          try {
            dealersJson = JSON.parse(text);
          } catch (error) {
            throw new Error(`The tree is not valid JSON: ${error.message}`);
          }
          const { data } = await api('POST', '/dealers/import', {
            dealers: Array.isArray(dealersJson) ? dealersJson : dealersJson.dealers,
          });
          toast(
            `Imported: ${data.created?.length ?? 0} created, ${data.updated?.length ?? 0} updated, ${data.unchanged?.length ?? 0} unchanged.`,
          );
          await render();
        });
      }),
    },
    h('h2', {}, 'Import a tree'),
    h(
      'label',
      {},
      'JSON: an array of profiles; each may have children (all or nothing)',
      h('textarea', {
        name: 'tree',
        required: true,
        spellcheck: 'false',
        placeholder: '[{"locationCode": "VDB", "children": [{"locationCode": "VDB-GENT", "city": "Gent"}]}]',
      }),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Import')),
  );
  return [
    h('h1', {}, 'Dealers'),
    h('div', { class: 'row' }, search, h('span', { class: 'muted' }, `${fmt(list.length)} profiles`)),
    treeHolder,
    errors,
    create,
    importForm,
  ];
}

async function dealer(id) {
  const { data: d } = await api('GET', `/dealers/${id}`);
  const errors = h('div');
  const edit = (name, label, value) => field(label, { name, value: value ?? '' });
  const form = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((event) => {
        const f = new FormData(event.target);
        const patch = {};
        for (const name of ['displayName', 'companyName', 'city', 'province', 'email', 'phone']) {
          const value = f.get(name).trim();
          if (value !== (d[name] ?? '')) patch[name] = value === '' ? null : value;
        }
        const parent = f.get('parent').trim();
        if (parent !== (d.parent?.locationCode ?? '')) {
          if (parent) patch.parentLocationCode = parent;
          else patch.parentId = null;
        }
        void attempt(errors, async () => {
          await api('PATCH', `/dealers/${id}`, patch);
          toast('Saved.');
          await render();
        });
      }),
    },
    h(
      'div',
      { class: 'row' },
      edit('parent', 'Parent location code (move it; empty: top level)', d.parent?.locationCode),
      edit('displayName', 'Display name', d.displayName),
      edit('companyName', 'Company name', d.companyName),
      edit('city', 'City', d.city),
      edit('province', 'Province', d.province),
      edit('email', 'Email', d.email),
      edit('phone', 'Phone', d.phone),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Save')),
    errors,
  );
  return [
    h('p', {}, h('a', { href: '#/dealers' }, '← Dealers')),
    h('h1', {}, d.locationCode),
    h('p', { class: 'muted' }, 'id ', h('code', {}, d.id)),
    form,
  ];
}

async function audit(before) {
  const page = await api('GET', `/audit-log?limit=50${before ? `&before=${before}` : ''}`);
  const subject = (e) =>
    e.partnerId
      ? h('a', { href: `#/partners/${e.partnerId}` }, e.partnerName ?? e.partnerId)
      : e.dealerId
        ? h('a', { href: `#/dealers/${e.dealerId}` }, e.dealerCode ?? e.dealerId)
        : '';
  return [
    h('h1', {}, 'Audit log'),
    table(
      ['at', 'who', 'action', 'subject', 'details', 'request id'],
      page.data.map((e) => [
        when(e.at),
        e.operator ?? e.actor,
        e.action,
        subject(e),
        h('code', {}, JSON.stringify(e.details)),
        h('span', { class: 'mono' }, e.requestId ?? ''),
      ]),
      'No entries.',
    ),
    page.pagination.nextBefore
      ? h('p', {}, h('a', { href: `#/audit?before=${page.pagination.nextBefore}` }, 'Older entries →'))
      : null,
  ];
}

async function operators() {
  const { data: list } = await api('GET', '/operators');
  const errors = h('div');
  const out = h('div');
  const form = h(
    'form',
    {
      class: 'panel inline',
      onsubmit: submitted((event) => {
        const name = new FormData(event.target).get('name');
        void attempt(errors, async () => {
          const { data } = await api('POST', '/operators', { name });
          out.replaceChildren(
            secretBox(
              `Operator token of ${data.name}`,
              data.token,
              'Shown only now. It signs in to this console and the CLI (--token).',
            ),
          );
          event.target.reset();
          await render({ keep: out });
        });
      }),
    },
    field('Name of the operator', { name: 'name', required: true, maxlength: 100 }),
    h('button', { type: 'submit' }, 'Create token'),
  );
  const revoke = (o) =>
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: () => {
          if (!confirm(`Revoke ${o.name}'s token? It is refused from its next request.`)) return;
          void attempt(errors, async () => {
            await api('DELETE', `/operators/${o.id}`);
            toast(`Revoked ${o.name}'s token.`);
            await render();
          });
        },
      },
      'Revoke',
    );
  return [
    h('h1', {}, 'Operators'),
    out,
    table(
      ['name', 'created', 'by', 'last used', 'state'],
      list.map((o) => [
        o.name,
        when(o.createdAt),
        o.createdBy,
        when(o.lastUsedAt),
        o.revokedAt ? `revoked ${when(o.revokedAt)}` : revoke(o),
      ]),
      'No operator tokens yet: everyone signs in with ADMIN_TOKEN. Create one per person.',
    ),
    form,
    errors,
  ];
}

// ---- Sign-in and routing ------------------------------------------------------------------------

function signInView(message) {
  const errors = h('div');
  return [
    h('h1', {}, 'Sign in'),
    message ? h('p', { class: 'warn' }, message) : null,
    h(
      'form',
      {
        class: 'panel',
        onsubmit: submitted((event) => {
          const token = new FormData(event.target).get('token').trim();
          sessionStorage.setItem(TOKEN_KEY, token);
          void attempt(errors, async () => {
            try {
              await api('GET', '/operators/me');
            } catch (error) {
              sessionStorage.removeItem(TOKEN_KEY);
              throw error.status === 401
                ? new Error('This token is not an operator token or ADMIN_TOKEN of this service.')
                : error;
            }
            await render();
          });
        }),
      },
      field('Operator token (fco_…) or ADMIN_TOKEN', {
        name: 'token',
        type: 'password',
        required: true,
        autocomplete: 'off',
        size: 60,
      }),
      h('p', { class: 'muted' }, 'Kept in this browser tab only, until you sign out or close it.'),
      h('p', {}, h('button', { type: 'submit' }, 'Sign in')),
      errors,
    ),
  ];
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  nav.hidden = true;
  who.replaceChildren();
  main.replaceChildren(...signInView(message));
}

const ROUTES = [
  [/^\/$/, () => overview(), 'Overview'],
  [/^\/partners$/, () => partners(), 'Partners'],
  [/^\/partners\/([\w-]+)$/, (m, q) => partner(m[1], q.get('window') === '7d' ? '7d' : '24h'), 'Partner'],
  [/^\/dealers$/, () => dealers(), 'Dealers'],
  [/^\/dealers\/([\w-]+)$/, (m) => dealer(m[1]), 'Dealer'],
  [/^\/requests(?:\/(.+))?$/, (m) => requests(m[1] ? decodeURIComponent(m[1]) : undefined), 'Requests'],
  [/^\/audit$/, (_m, q) => audit(q.get('before')), 'Audit log'],
  [/^\/operators$/, () => operators(), 'Operators'],
];

async function render(options = {}) {
  clearInterval(refreshTimer);
  if (!sessionStorage.getItem(TOKEN_KEY)) return signOut();
  const [path, query = ''] = (location.hash.slice(1) || '/').split('?');
  const route = ROUTES.find(([pattern]) => pattern.test(path));
  if (!route) {
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Overview')));
    return;
  }
  try {
    const me = await api('GET', '/operators/me');
    nav.hidden = false;
    who.replaceChildren(
      h('span', {}, `Signed in as ${me.data.name}`),
      h('button', { type: 'button', onclick: () => signOut('Signed out.') }, 'Sign out'),
    );
    for (const a of nav.querySelectorAll('a')) {
      const section = a.getAttribute('href').slice(1);
      a.toggleAttribute('aria-current', section === '/' ? path === '/' : path.startsWith(section));
      if (a.hasAttribute('aria-current')) a.setAttribute('aria-current', 'page');
    }
    const content = await route[1](path.match(route[0]), new URLSearchParams(query));
    document.title = `${route[2]} · Forecourt console`;
    main.replaceChildren(...(options.keep ? [options.keep] : []), ...[content].flat().filter(Boolean));
    // The overview follows the traffic by itself (a partner's page has forms: it refreshes on demand).
    if (route[2] === 'Overview') refreshTimer = setInterval(() => render(), 10_000);
  } catch (error) {
    if (error.status === 401) return;
    main.replaceChildren(h('h1', {}, 'Something went wrong'), errorBox(error));
  }
}

window.addEventListener('hashchange', () => {
  // A message belongs to the page it was said on.
  document.getElementById('toast').textContent = '';
  void render().then(() => main.focus());
});
void render();
