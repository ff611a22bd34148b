// @ts-check
// One dealer profile: edit it, and move it (change its parent), seeing first which partners gain
// or lose it (and everything under it) by the move.
import { api, query } from '../admin-api.js';
import { redraw } from '../redraw.js';
import { attempt, field, h, submitted, text, toast } from '../ui.js';

/** @typedef {import('../types.js').Dealer} Dealer */
/** @typedef {import('../types.js').MoveImpact} MoveImpact */

const EDITABLE = /** @type {const} */ (['displayName', 'companyName', 'city', 'province', 'email', 'phone']);

/**
 * What a move does to partners' access, in words.
 * @param {MoveImpact} impact
 */
function impactText(impact) {
  /** @param {{id: string, name: string}[]} list */
  const names = (list) => list.map((p) => h('li', {}, h('a', { href: `#/partners/${p.id}` }, p.name)));
  const where = impact.newParent ? `under ${impact.newParent.locationCode}` : 'to the top level';
  const moved =
    impact.profilesMoved === 1 ? 'This profile' : `This profile and the ${impact.profilesMoved - 1} under it`;
  return [
    h('p', {}, `${moved} move ${where}.`),
    impact.gains.length
      ? [
          h(
            'p',
            {},
            `${impact.gains.length === 1 ? 'This partner sees' : 'These partners see'} them from now on:`,
          ),
          h('ul', { 'data-gains': '' }, names(impact.gains)),
        ]
      : h('p', {}, 'No partner gains them.'),
    impact.loses.length
      ? [
          h(
            'p',
            {},
            `${impact.loses.length === 1 ? 'This partner no longer sees' : 'These partners no longer see'} them (and their listings):`,
          ),
          h('ul', { 'data-loses': '' }, names(impact.loses)),
        ]
      : h('p', {}, 'No partner loses them.'),
  ].flat();
}

/**
 * @param {string} id
 * @returns {Promise<import('../types.js').Content>}
 */
export async function dealer(id) {
  /** @type {{data: Dealer}} */
  const { data: d } = await api('GET', `/dealers/${id}`);
  const errors = h('div');
  const preview = h('div');
  /** @param {Record<string, unknown>} patch */
  const save = (patch) =>
    attempt(errors, async () => {
      await api('PATCH', `/dealers/${id}`, patch);
      await redraw();
      toast('Saved.');
    });
  /** @param {string} name @param {string} label @param {string | null} value */
  const edit = (name, label, value) => field(label, { name, value: value ?? '' });
  const form = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((f) => {
        /** @type {Record<string, unknown>} */
        const patch = {};
        for (const name of EDITABLE) {
          const value = text(f, name);
          if (value !== (d[name] ?? '')) patch[name] = value === '' ? null : value;
        }
        const parent = text(f, 'parent');
        preview.replaceChildren();
        if (parent === (d.parent?.locationCode ?? '')) return void save(patch);
        if (parent) patch.parentLocationCode = parent;
        else patch.parentId = null;
        // A move changes which partners see this branch: said before it is saved.
        void attempt(errors, async () => {
          /** @type {{data: MoveImpact}} */
          const { data: impact } = await api(
            'GET',
            `/dealers/${id}/move-impact${query({ parentLocationCode: parent })}`,
          );
          preview.replaceChildren(
            h(
              'div',
              {
                class: 'panel warn-box',
                role: 'region',
                'aria-label': 'Move impact',
                'data-move-impact': '',
              },
              h('h2', {}, 'Before you move it'),
              ...impactText(impact),
              h(
                'p',
                {},
                h('button', { type: 'button', onclick: () => void save(patch) }, 'Move and save'),
                ' ',
                h(
                  'button',
                  { type: 'button', class: 'secondary', onclick: () => preview.replaceChildren() },
                  'Cancel',
                ),
              ),
            ),
          );
        });
      }),
    },
    h(
      'div',
      { class: 'row' },
      edit('parent', 'Parent location code (move it; empty: top level)', d.parent?.locationCode ?? null),
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
    h(
      'p',
      { class: 'muted' },
      d.parent ? `Under ${d.parent.locationCode} · id ` : 'At the top level · id ',
      h('code', {}, d.id),
    ),
    form,
    preview,
  ];
}
