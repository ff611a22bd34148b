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
  /** @param {Record<string, unknown>} patch @param {string} [said] */
  const save = (patch, said = 'Saved.') =>
    attempt(errors, async () => {
      await api('PATCH', `/dealers/${id}`, patch);
      await redraw();
      toast(said);
    });
  /**
   * The form as a patch: the fields changed, and the parent typed.
   * @param {FormData} f
   */
  const read = (f) => {
    /** @type {Record<string, unknown>} */
    const patch = {};
    for (const name of EDITABLE) {
      const value = text(f, name);
      if (value !== (d[name] ?? '')) patch[name] = value === '' ? null : value;
    }
    return { patch, parent: text(f, 'parent') };
  };
  /** What the preview on screen was made from: saved only while the form still says the same. */
  let previewed = '';
  const stale = () => {
    previewed = '';
    preview.replaceChildren(
      h(
        'div',
        { class: 'panel warn-box', role: 'region', 'aria-label': 'Move impact', 'data-move-impact': '' },
        h('p', {}, 'You changed the form after this preview: it no longer says what saving would do.'),
        h('p', {}, h('button', { type: 'button', onclick: () => form.requestSubmit() }, 'Preview again')),
      ),
    );
  };
  /** @param {string} name @param {string} label @param {string | null} value */
  const edit = (name, label, value) => field(label, { name, value: value ?? '' });
  const form = h(
    'form',
    {
      class: 'panel',
      // A preview shows one state of the form: a change after it makes it stale (it saved the
      // previewed parent, dropped a city typed since, and said "Saved.").
      oninput: () => {
        if (previewed) stale();
      },
      onsubmit: submitted((f) => {
        const { patch, parent } = read(f);
        const asPreviewed = JSON.stringify({ patch, parent });
        preview.replaceChildren();
        previewed = '';
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
          // Typed into while the impact was asked for: that answer is already stale.
          if (JSON.stringify(read(new FormData(form))) !== asPreviewed) return stale();
          const where = parent ? `under ${parent}` : 'to the top level';
          const moveAndSave = () => {
            // Saved only as previewed: the form read again must say what the preview was made of.
            if (!previewed || JSON.stringify(read(new FormData(form))) !== previewed) return stale();
            void save(patch, `Moved ${where} and saved.`);
          };
          const heading = h('h2', { tabindex: -1 }, 'Before you move it');
          previewed = asPreviewed;
          preview.replaceChildren(
            h(
              'div',
              {
                class: 'panel warn-box',
                role: 'region',
                'aria-label': 'Move impact',
                'data-move-impact': '',
              },
              heading,
              ...impactText(impact),
              h(
                'p',
                {},
                h('button', { type: 'button', onclick: moveAndSave }, 'Move and save'),
                ' ',
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary',
                    onclick: () => {
                      previewed = '';
                      preview.replaceChildren();
                    },
                  },
                  'Cancel',
                ),
              ),
            ),
          );
          // Below the form on a phone, out of sight: brought into view from its start, its heading focused.
          preview.scrollIntoView({ block: 'start' });
          heading.focus({ preventScroll: true });
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
