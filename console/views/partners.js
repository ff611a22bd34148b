// @ts-check
// Every partner, and a new one: its scopes, and its access picked in the dealer tree.
import { api } from '../admin-api.js';
import { lastUse } from '../format.js';
import { redraw } from '../redraw.js';
import { accessText, rootPicker } from '../tree.js';
import { attempt, field, h, secretBox, showSecret, state, submitted, table, text } from '../ui.js';

/** @typedef {import('../types.js').Partner} Partner */
/** @typedef {import('../types.js').Dealer} Dealer */

export const SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'];

/**
 * The scopes' checkboxes, those in `checked` ticked.
 * @param {string[]} checked
 */
export const scopeBoxes = (checked) =>
  h(
    'fieldset',
    {},
    h('legend', {}, 'Scopes'),
    SCOPES.map((s) =>
      h(
        'label',
        { class: 'check' },
        h('input', { type: 'checkbox', name: 'scope', value: s, checked: checked.includes(s) }),
        ` ${s}`,
      ),
    ),
  );

/**
 * Access: global, or roots picked in the tree.
 * @param {Dealer[]} dealers
 * @param {Partner['access']} access
 * @param {string} idPrefix
 */
export function accessFields(dealers, access, idPrefix) {
  const picker = rootPicker(dealers, access.scope === 'restricted' ? access.rootProfileIds : [], idPrefix);
  const element = h(
    'fieldset',
    {},
    h('legend', {}, 'Access'),
    h(
      'label',
      { class: 'check' },
      h('input', {
        type: 'radio',
        name: 'access',
        value: 'restricted',
        checked: access.scope === 'restricted',
      }),
      ' these dealer profiles and everything under them (tick them in the tree):',
    ),
    picker.element,
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'radio', name: 'access', value: 'global', checked: access.scope === 'global' }),
      ' global: every dealer',
    ),
  );
  /**
   * The access picked; restricted with no root is refused here, in words (the API said "Too
   * small: expected array to have >=1 items").
   * @param {FormData} f
   */
  const value = (f) => {
    if (f.get('access') === 'global') return { scope: 'global' };
    const rootProfileIds = picker.picked();
    if (!rootProfileIds.length)
      throw new Error('Access: pick at least one dealer profile in the tree, or choose global access.');
    return { scope: 'restricted', rootProfileIds };
  };
  return { element, value };
}

/** @returns {Promise<import('../types.js').Content>} */
export async function partners() {
  /** @type {[{data: Partner[]}, {data: Dealer[]}]} */
  const [{ data: list }, { data: dealers }] = await Promise.all([
    api('GET', '/partners'),
    api('GET', '/dealers'),
  ]);
  const dealersById = new Map(dealers.map((d) => [d.id, d]));
  const errors = h('div');
  const access = accessFields(dealers, { scope: 'restricted', rootProfileIds: [] }, 'new-root');
  const form = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((f) => {
        void attempt(errors, async () => {
          /** @type {{data: Partner & {secret: string}}} */
          const { data } = await api('POST', '/partners', {
            name: f.get('name'),
            scopes: f.getAll('scope'),
            access: access.value(f),
            ...(text(f, 'rateLimit') ? { rateLimitPerMinute: Number(f.get('rateLimit')) } : {}),
          });
          const box = secretBox(
            `API secret of ${data.name}`,
            data.secret,
            'Shown only now: hand it to the partner over a safe channel. If it is lost, rotate it.',
          );
          // The list is drawn again with the new partner in it (it was missing until the next page);
          // the secret under the heading, brought into view with the focus (it was drawn far above
          // the form clicked). Nothing is added to the page before it is drawn again.
          const link = h('p', {}, h('a', { href: `#/partners/${data.id}` }, `Open ${data.name}`));
          await redraw({ keep: h('div', {}, box, link) });
          showSecret(box);
        });
      }),
    },
    h('h2', {}, 'New partner'),
    h(
      'div',
      { class: 'row' },
      // No maxlength: a longer name is refused in words, not cut where the browser stops typing.
      field('Name', { name: 'name', required: true }),
      field('Rate limit (requests a minute; empty: the default)', {
        name: 'rateLimit',
        type: 'number',
        min: 1,
      }),
    ),
    scopeBoxes(['read:listings', 'read:locations']),
    access.element,
    h('p', {}, h('button', { type: 'submit' }, 'Create partner')),
    errors,
  );
  const rows = list.map((p) => [
    h('a', { href: `#/partners/${p.id}` }, p.name),
    p.scopes.join(', '),
    accessText(p.access, dealersById),
    p.rateLimitPerMinute ?? 'default',
    lastUse(p),
    state(!p.disabled, 'active', 'disabled'),
  ]);
  return [
    h('h1', {}, 'Partners'),
    table(
      ['name', 'scopes', 'access', { label: 'rate limit', num: true }, 'last used', 'state'],
      rows,
      'No partners yet.',
    ),
    form,
  ];
}
