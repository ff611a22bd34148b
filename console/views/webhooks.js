// @ts-check
// Webhook endpoints: every partner's (filtered by state: the overview's counts link here), one
// partner's on its page, and one endpoint with its recent deliveries and what its receiver
// answered, to test, retry now, resume or disable.
import { api, query } from '../admin-api.js';
import { shortId, when } from '../format.js';
import { redraw } from '../redraw.js';
import { ask, attempt, field, h, submitted, table, text, toast } from '../ui.js';

/** @typedef {import('../types.js').WebhookEndpoint} Endpoint */

/**
 * An endpoint's state in words (never only a colour).
 * @param {Endpoint} e
 */
const stateOf = (e) =>
  !e.enabled
    ? // The service words its reasons "disabled by the operator: …", "disabled after 3 days of failures".
      h(
        'span',
        { class: 'bad' },
        e.disabledReason?.startsWith('disabled')
          ? e.disabledReason
          : `disabled${e.disabledReason ? `: ${e.disabledReason}` : ''}`,
      )
    : e.failingSince
      ? h('span', { class: 'warn' }, `failing since ${when(e.failingSince)}`)
      : h('span', { class: 'ok' }, 'enabled');

/** Which endpoints each state of the overview's counts means. */
const STATES = {
  enabled: /** @param {Endpoint} e */ (e) => e.enabled,
  disabled: /** @param {Endpoint} e */ (e) => !e.enabled,
  failing: /** @param {Endpoint} e */ (e) => e.enabled && e.failingSince !== null,
  pending: /** @param {Endpoint} e */ (e) => e.pendingDelivery !== null,
};

/**
 * @param {Endpoint[]} list
 * @param {Map<string, string>} [partnerNames] given: a partner column
 */
function endpointTable(list, partnerNames) {
  return table(
    ['endpoint', ...(partnerNames ? ['partner'] : []), 'state', 'pending delivery', 'since'],
    list.map((e) => [
      h(
        'span',
        {},
        h('a', { href: `#/webhooks/${e.id}`, class: 'url' }, e.url),
        // Registered with a test secret: receives test data only (docs/test-mode.md).
        e.test ? h('span', { class: 'muted', 'data-test-endpoint': '' }, ' (test)') : null,
      ),
      ...(partnerNames
        ? [h('a', { href: `#/partners/${e.partnerId}` }, partnerNames.get(e.partnerId) ?? e.partnerId)]
        : []),
      stateOf(e),
      e.pendingDelivery
        ? `attempt ${e.pendingDelivery.attempt}, next ${when(e.pendingDelivery.nextAttemptAt)}`
        : '',
      when(e.disabledAt ?? e.failingSince ?? e.createdAt),
    ]),
    'No webhook endpoints.',
  );
}

/**
 * A partner's endpoints, for its page.
 * @param {string} partnerId
 */
export async function endpointsOf(partnerId) {
  /** @type {{data: Endpoint[]}} */
  const { data } = await api('GET', `/webhooks${query({ partnerId })}`);
  return endpointTable(data);
}

/**
 * @param {URLSearchParams} q `state`: enabled, disabled, failing or pending
 * @returns {Promise<import('../types.js').Content>}
 */
export async function webhooks(q) {
  /** @type {[{data: Endpoint[]}, {data: import('../types.js').Partner[]}]} */
  const [{ data }, { data: partners }] = await Promise.all([
    api('GET', '/webhooks'),
    api('GET', '/partners'),
  ]);
  const names = new Map(partners.map((p) => [p.id, p.name]));
  const wanted = /** @type {keyof typeof STATES | null} */ (q.get('state'));
  const filter = wanted && wanted in STATES ? STATES[wanted] : null;
  const shown = filter ? data.filter(filter) : data;
  return [
    h('h1', {}, 'Webhooks'),
    h(
      'p',
      { class: 'tabs' },
      [['', 'all'], ...Object.keys(STATES).map((s) => [s, s])].map(([s, label]) =>
        h(
          'a',
          {
            href: `#/webhooks${s ? `?state=${s}` : ''}`,
            'aria-current': (wanted ?? '') === s ? 'page' : undefined,
          },
          `${label} (${(s ? data.filter(STATES[/** @type {keyof typeof STATES} */ (s)]) : data).length})`,
        ),
      ),
    ),
    endpointTable(shown, names),
  ];
}

/** @typedef {import('../types.js').Delivery} Delivery */

/** @param {Delivery} d "attempt 3: failed (the receiver answered 500)" */
const outcome = (d) =>
  `attempt ${d.attempt} ${d.status}${d.responseCode ? ` (the receiver answered ${d.responseCode})` : d.error ? ` (${d.error})` : ''}`;

/**
 * After an action that makes the dispatcher try (resume, retry now): the page follows until the
 * attempt is logged, then shows it, no reload (it kept showing the attempt before).
 * @param {string} id
 * @param {string | undefined} before the newest attempt shown before the action
 */
async function follow(id, before) {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The operator went elsewhere: nothing to follow on this page.
    if (!location.hash.startsWith(`#/webhooks/${id}`)) return;
    /** @type {{data: Delivery[]}} */
    const { data } = await api('GET', `/webhooks/${id}/deliveries?pageSize=1`);
    const newest = data[0];
    if (newest && newest.id !== before) {
      await redraw();
      toast(`The next delivery: ${outcome(newest)}.`);
      return;
    }
  }
  await redraw();
  toast('No attempt yet: the page shows the endpoint as it is now.');
}

/** The first characters of a receiver's answer in a cell; all of it (up to 1 KB, as kept) in its title. */
const answerText = (/** @type {string | null} */ body) =>
  body
    ? h('span', { class: 'answer', title: body }, body.length > 160 ? `${body.slice(0, 160)}…` : body)
    : '';

/**
 * One endpoint: its state, its recent deliveries, test, retry now, resume or disable.
 * @param {string} id
 * @returns {Promise<import('../types.js').Content>}
 */
export async function webhook(id) {
  /** @type {[{data: Endpoint}, {data: import('../types.js').Delivery[]}]} */
  const [{ data: e }, { data: deliveries }] = await Promise.all([
    api('GET', `/webhooks/${id}`),
    api('GET', `/webhooks/${id}/deliveries?pageSize=30`),
  ]);
  /** @type {{data: import('../types.js').Partner}} */
  const { data: owner } = await api('GET', `/partners/${e.partnerId}`);
  const errors = h('div');
  const newest = deliveries[0]?.id;
  // A signed ping now: what the receiver answers today, its deliveries untouched (no disable).
  const test = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () =>
        void attempt(errors, async () => {
          /** @type {{data: Delivery}} */
          const { data: ping } = await api('POST', `/webhooks/${id}/test`);
          const said = h(
            'p',
            { role: 'status', class: ping.status === 'succeeded' ? 'ok' : 'bad', 'data-ping': '' },
            `Test ping: ${ping.responseCode ? `the receiver answered ${ping.responseCode}` : 'no answer'}${ping.responseBody ? ` (${ping.responseBody.slice(0, 160)})` : ''}${ping.error ? `: ${ping.error}` : ''}.`,
          );
          await redraw({ keep: said });
        }),
    },
    'Send a test ping',
  );
  // Failing but enabled: the delivery waiting for its back-off (up to an hour) is sent now.
  const retry =
    e.enabled && e.failingSince && e.pendingDelivery
      ? h(
          'button',
          {
            type: 'button',
            onclick: () =>
              void attempt(errors, async () => {
                await api('POST', `/webhooks/${id}/retry`);
                toast('Retrying now: the page shows the attempt when it is made.');
                await follow(id, newest);
              }),
          },
          'Retry now',
        )
      : null;
  const action = e.enabled
    ? h(
        'form',
        {
          class: 'inline',
          onsubmit: submitted((f) => {
            const reason = text(f, 'reason');
            if (!ask(`Disable ${e.url}? Nothing is delivered to it until an operator resumes it.`)) return;
            void attempt(errors, async () => {
              await api('POST', `/webhooks/${id}/disable`, reason ? { reason } : {});
              await redraw();
              toast('Endpoint disabled.');
            });
          }),
        },
        field('Why (the partner sees it)', { name: 'reason', maxlength: 500, size: 40 }),
        h('button', { type: 'submit', class: 'danger' }, 'Disable endpoint'),
      )
    : h(
        'button',
        {
          type: 'button',
          onclick: () =>
            void attempt(errors, async () => {
              await api('POST', `/webhooks/${id}/enable`);
              await redraw();
              toast('Endpoint resumed: deliveries go on from where they stopped.');
              await follow(id, newest);
            }),
        },
        'Resume deliveries',
      );
  return [
    h(
      'p',
      {},
      h('a', { href: `#/partners/${owner.id}` }, `← ${owner.name}`),
      ' · ',
      h('a', { href: '#/webhooks' }, 'all webhooks'),
    ),
    h('h1', { class: 'url' }, e.url),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'partner'),
      h('dd', {}, h('a', { href: `#/partners/${owner.id}` }, owner.name)),
      h('dt', {}, 'state'),
      h('dd', { 'data-state': '' }, stateOf(e)),
      h('dt', {}, 'description'),
      h('dd', { 'data-description': '' }, e.description ?? '—'),
      h('dt', {}, 'pending delivery'),
      h(
        'dd',
        {},
        e.pendingDelivery
          ? `attempt ${e.pendingDelivery.attempt}, next at ${when(e.pendingDelivery.nextAttemptAt)}`
          : 'none',
      ),
      h('dt', {}, 'created'),
      h('dd', {}, when(e.createdAt)),
    ),
    h('div', { class: 'panel' }, h('p', { class: 'row' }, test, retry), action, errors),
    h('h2', {}, 'Recent deliveries'),
    table(
      [
        { label: 'at', class: 'nowrap' },
        'type',
        { label: 'attempt', num: true },
        'result',
        { label: 'answer', num: true },
        "receiver's answer",
        'why',
        { label: 'webhook id', class: 'nowrap' },
      ],
      deliveries.map((d) => [
        when(d.createdAt),
        `${d.type}${d.listingCount ? ` (${d.listingCount})` : ''}`,
        d.attempt,
        h('span', { class: d.status === 'succeeded' ? 'ok' : 'bad' }, d.status),
        d.responseCode ?? '',
        answerText(d.responseBody),
        d.error ?? (d.nextAttemptAt ? `retry at ${when(d.nextAttemptAt)}` : ''),
        h('span', { class: 'mono', title: d.webhookId }, shortId(d.webhookId)),
      ]),
      'No deliveries yet.',
    ),
  ];
}
