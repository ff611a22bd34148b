// @ts-check
// One partner: its secret (rotation with grace, and whether it moved), rate limit, disable and
// enable, usage over 24 hours or 7 days, failed requests, image health, webhooks, and editing it.
import { api } from '../admin-api.js';
import { fmt, lastUse, when } from '../format.js';
import { redraw } from '../redraw.js';
import { counts, retireQuestion, verdict } from '../rotation.js';
import { accessText } from '../tree.js';
import {
  ask,
  attempt,
  cards,
  chart,
  field,
  h,
  secretBox,
  showSecret,
  submitted,
  table,
  text,
  toast,
} from '../ui.js';
import { imageHealthOf } from './image-health.js';
import { editPartner } from './partner-edit.js';
import { failureTable } from './requests.js';
import { triedInTest } from './tried-in-test.js';
import { endpointsOf } from './webhooks.js';

/** @typedef {import('../types.js').Partner} Partner */

/**
 * A grace under way: the one verdict, the counts it rests on, and ending the grace now (the
 * previous secret retired, the current one kept: rotating again with no grace would issue a third
 * secret and refuse the one the partner just moved to).
 * @param {Partner} p
 * @param {import('../rotation.js').Rotation} r
 * @param {(action: () => Promise<void>) => Promise<void>} act
 */
function rotationPanel(p, r, act) {
  const retire = () => {
    if (!ask(retireQuestion(p.name, r))) return;
    void act(async () => {
      await api('POST', `/partners/${p.id}/retire-previous-secret`);
      await redraw();
      toast('The previous secret is retired; the current secret keeps working.');
    });
  };
  return h(
    'section',
    { class: 'panel warn-box', 'aria-labelledby': 'rotation-heading', 'data-rotation': '' },
    h(
      'h2',
      { id: 'rotation-heading' },
      `Secret rotation: the previous secret works until ${when(p.previousSecretValidUntil)}`,
    ),
    h('p', { 'data-verdict': '', class: r.verdict === 'moved' ? 'ok' : 'warn' }, verdict(r)),
    h(
      'ul',
      { 'data-key-counts': '' },
      counts(r).map((line) => h('li', {}, line)),
    ),
    h(
      'p',
      { class: 'row' },
      h(
        'button',
        { type: 'button', class: r.verdict === 'moved' ? '' : 'danger', onclick: retire },
        'Retire the previous secret now',
      ),
      h(
        'a',
        { href: `#/requests?partnerId=${p.id}&key=previous` },
        'Failed requests with the previous secret',
      ),
    ),
  );
}

/**
 * @param {string} id
 * @param {'24h' | '7d'} window
 * @returns {Promise<import('../types.js').Content>}
 */
export async function partner(id, window = '24h') {
  /** @type {[{data: Partner}, {data: import('../types.js').Usage}, {data: import('../types.js').Usage}, {data: import('../types.js').TestUse}, import('../types.js').RequestPage, {data: import('../types.js').Dealer[]}]} */
  const [{ data: p }, { data: usage }, { data: testUsage }, { data: tried }, failures, { data: dealers }] =
    await Promise.all([
      api('GET', `/partners/${id}`),
      api('GET', `/partners/${id}/usage?window=${window}`),
      // Test requests are counted apart (docs/test-mode.md): the usage above is live traffic only.
      api('GET', `/partners/${id}/usage?window=${window}&test=true`),
      api('GET', `/partners/${id}/test-use`),
      api('GET', `/requests?partnerId=${id}&pageSize=20`),
      api('GET', '/dealers'),
    ]);
  // During a grace: which secret each request sent since the rotation, and the verdict drawn from it.
  /** @type {import('../rotation.js').Rotation | null} */
  const rotation = p.previousSecretValidUntil ? (await api('GET', `/partners/${id}/rotation`)).data : null;
  const dealersById = new Map(dealers.map((d) => [d.id, d]));
  const errors = h('div');
  /** @param {() => Promise<void>} action */
  const act = (action) => attempt(errors, action);
  const rotate = h(
    'form',
    {
      class: 'inline',
      onsubmit: submitted((f) => {
        const grace = Number(f.get('grace'));
        // Ending the old secret at once cuts the partner off until it has the new one: asked first.
        if (
          grace === 0 &&
          !ask(
            `Rotate ${p.name}'s secret with no grace? The current secret is refused from this moment, and every request of the partner fails until it uses the new one.`,
          )
        )
          return;
        void act(async () => {
          /** @type {{data: {secret: string, previousSecretValidUntil: string | null}}} */
          const { data } = await api('POST', `/partners/${id}/rotate-secret`, { graceSeconds: grace });
          const box = secretBox(
            `New API secret of ${p.name}`,
            data.secret,
            data.previousSecretValidUntil
              ? `The previous secret keeps working until ${when(data.previousSecretValidUntil)}; then it is refused (and shows as "retired" in the failed requests).`
              : 'The previous secret stopped working now.',
          );
          // The page as it is now (a grace ended by a rotation without one shows no more), the
          // secret kept under its heading, in view, focused.
          await redraw({ keep: box });
          showSecret(box);
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
        // 24 hours by default: time for the partner to deploy the new secret.
        [
          ['3600', '1 hour'],
          ['86400', '24 hours'],
          ['604800', '7 days'],
          ['0', 'no time: stop it now (asks first)'],
        ].map(([v, l]) => h('option', { value: v, selected: v === '86400' }, l)),
      ),
    ),
    h('button', { type: 'submit' }, 'Rotate secret'),
  );
  const limit = h(
    'form',
    {
      class: 'inline',
      onsubmit: submitted((f) => {
        const value = text(f, 'limit');
        void act(async () => {
          await api('PATCH', `/partners/${id}`, { rateLimitPerMinute: value ? Number(value) : null });
          await redraw();
          toast('Rate limit saved.');
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
              await redraw();
              toast('Enabled.');
            }),
        },
        'Enable partner',
      )
    : h(
        'form',
        {
          class: 'inline',
          onsubmit: submitted((f) => {
            const reason = text(f, 'reason');
            if (!ask(`Disable ${p.name}? Every request with its secrets is refused until you enable it.`))
              return;
            void act(async () => {
              await api('PATCH', `/partners/${id}`, {
                disabled: true,
                ...(reason ? { disabledReason: reason } : {}),
              });
              await redraw();
              toast('Disabled.');
            });
          }),
        },
        field('Why (kept with the partner and in the audit log)', {
          name: 'reason',
          size: 40,
        }),
        h('button', { type: 'submit', class: 'danger' }, 'Disable partner'),
      );
  const t = usage.totals;
  const other = window === '24h' ? '7d' : '24h';
  // The buckets of both charts, live and test: hourly over 24 hours, 6-hourly over 7 days.
  const bucket =
    window === '24h' ? { word: 'per hour', ms: 3_600_000 } : { word: 'per 6 hours', ms: 6 * 3_600_000 };
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
    h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: () => redraw() }, 'Refresh')),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'scopes'),
      h('dd', {}, p.scopes.join(', ') || 'none'),
      h('dt', {}, 'access'),
      h('dd', { 'data-access': '' }, accessText(p.access, dealersById)),
      h('dt', {}, 'last used'),
      h('dd', { 'data-last-used': '' }, lastUse(p)),
      // docs/test-mode.md: issued and revoked here, or with forecourt partners test-secret.
      h('dt', {}, 'test secret'),
      h(
        'dd',
        {},
        h(
          'span',
          { 'data-test-secret': '' },
          p.testSecretIssuedAt ? `issued ${when(p.testSecretIssuedAt)}` : 'none',
        ),
        ' ',
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () => {
              // A new test secret ends the one held at once: asked first when there is one.
              if (
                p.testSecretIssuedAt &&
                !ask(`Issue ${p.name} a new test secret? The current test secret stops working now.`)
              )
                return;
              void act(async () => {
                /** @type {{data: {secret: string}}} */
                const { data } = await api('POST', `/partners/${id}/test-secret`);
                const box = secretBox(
                  `Test secret of ${p.name}`,
                  data.secret,
                  'Requests with it see and change test data only; live listings and webhooks are untouched.',
                );
                await redraw({ keep: box });
                showSecret(box);
              });
            },
          },
          p.testSecretIssuedAt ? 'Issue a new test secret' : 'Issue test secret',
        ),
        p.testSecretIssuedAt
          ? h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                onclick: () => {
                  if (!ask(`Revoke ${p.name}'s test secret? Its test data stays until wiped or expired.`))
                    return;
                  void act(async () => {
                    await api('DELETE', `/partners/${id}/test-secret`);
                    await redraw();
                  });
                },
              },
              'Revoke test secret',
            )
          : null,
      ),
      h('dt', {}, 'id'),
      h('dd', {}, h('code', {}, p.id)),
    ),
    rotation ? rotationPanel(p, rotation, act) : null,
    h('div', { class: 'panel' }, rotate, h('hr'), limit, h('hr'), toggle, errors),
    h(
      'h2',
      {},
      `Usage, ${window === '24h' ? 'last 24 hours (hourly)' : 'last 7 days (6-hourly)'} `,
      h('a', { href: `#/partners/${id}?window=${other}` }, other === '7d' ? 'show 7 days' : 'show 24 hours'),
    ),
    cards(
      /** @type {[string, number][]} */ ([
        ['requests', t.requests],
        ['4xx', t.clientErrors],
        ['5xx', t.serverErrors],
        ['rate-limited', t.rateLimited],
        ['bulk items written', t.itemsWritten],
        ['bulk items refused', t.itemsFailed],
      ]).map(([label, n]) => [label, fmt(n), { 'data-total': label }]),
    ),
    chart(usage.buckets, {
      label: `Requests and errors of ${p.name}, ${bucket.word}`,
      startOf: (b) => b.start,
      stepMs: bucket.ms,
    }),
    t.failuresNotKept
      ? h(
          'p',
          { class: 'warn' },
          `${fmt(t.failuresNotKept)} failures were counted but not kept one by one (over the per-minute limit).`,
        )
      : null,
    p.testSecretIssuedAt || testUsage.totals.requests || tried.written || tried.testListings
      ? h(
          'div',
          { 'data-test-usage': '' },
          h('h2', {}, 'Test usage (requests with the test secret, not counted above)'),
          cards(
            /** @type {[string, number][]} */ ([
              ['requests', testUsage.totals.requests],
              ['4xx', testUsage.totals.clientErrors],
              ['5xx', testUsage.totals.serverErrors],
              ['bulk items written', testUsage.totals.itemsWritten],
            ]).map(([label, n]) => [label, fmt(n), { 'data-test-total': label }]),
          ),
          h(
            'div',
            { 'data-test-chart': '' },
            chart(testUsage.buckets, {
              label: `Test requests and errors of ${p.name}, ${bucket.word}`,
              startOf: (b) => b.start,
              stepMs: bucket.ms,
            }),
          ),
          triedInTest(tried),
        )
      : null,
    h('h2', {}, 'Top error codes'),
    table(
      ['code', { label: 'status', num: true }, { label: 'count', num: true }],
      usage.topErrorCodes.map((c) => [
        h('a', { href: `#/requests?partnerId=${id}&code=${c.code}` }, c.code),
        c.status,
        fmt(c.count),
      ]),
      'No errors in this window.',
    ),
    h(
      'h2',
      {},
      'Recent failed requests ',
      h('a', { href: `#/requests?partnerId=${id}` }, 'all, with filters'),
    ),
    failureTable(failures.data, false, `?partnerId=${id}`),
    await imageHealthOf(id),
    h('h2', {}, 'Webhook endpoints'),
    await endpointsOf(id),
    h('h2', {}, 'Edit'),
    editPartner(p, dealers),
  ];
}
