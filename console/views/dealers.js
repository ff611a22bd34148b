// @ts-check
// The dealer tree: search it, create a location under a parent, import a whole tree as JSON.
import { api } from '../admin-api.js';
import { fmt } from '../format.js';
import { redraw } from '../redraw.js';
import { childrenByParent, drawTree } from '../tree.js';
import { attempt, field, h, submitted, text, toast } from '../ui.js';

/** @typedef {import('../types.js').Dealer} Dealer */

/** @returns {Promise<import('../types.js').Content>} */
export async function dealers() {
  /** @type {{data: Dealer[]}} */
  const { data: list } = await api('GET', '/dealers');
  const errors = h('div');
  const importErrors = h('div');
  const byParent = childrenByParent(list);
  const search = h('input', {
    type: 'search',
    name: 'q',
    'aria-label': 'Search dealer profiles by code, name or city',
    placeholder: 'Search code, name, city',
  });
  const treeHolder = h('div', { class: 'panel' });
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const tree = drawTree(byParent, q, (d) => [
      h('a', { href: `#/dealers/${d.id}` }, d.locationCode),
      ` ${d.displayName ?? d.companyName ?? ''}`,
      d.city ? h('span', { class: 'muted' }, ` · ${d.city}`) : null,
    ]);
    treeHolder.replaceChildren(
      tree ?? h('p', { class: 'muted' }, q ? 'Nothing matches.' : 'No dealer profiles yet.'),
    );
  };
  search.addEventListener('input', draw);
  draw();
  const create = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((f) => {
        void attempt(errors, async () => {
          /** @type {{data: Dealer}} */
          const { data } = await api('POST', '/dealers', {
            locationCode: f.get('code'),
            ...(text(f, 'parent') ? { parentLocationCode: text(f, 'parent') } : {}),
            ...(text(f, 'name') ? { displayName: text(f, 'name') } : {}),
            ...(text(f, 'city') ? { city: text(f, 'city') } : {}),
          });
          await redraw();
          toast(`Created ${data.locationCode}.`);
        });
      }),
    },
    h('h2', {}, 'New location'),
    h(
      'div',
      { class: 'row' },
      // No maxlength: a longer text is refused in words, never cut where the browser stops typing
      // (a 230-character name was saved as its first 200 units, mid-word, without a word).
      field('Location code', { name: 'code', required: true }),
      field('Parent location code (empty: a group at the top)', { name: 'parent' }),
      field('Display name', { name: 'name' }),
      field('City', { name: 'city' }),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Create location')),
    errors,
  );
  const importForm = h(
    'form',
    {
      class: 'panel',
      onsubmit: submitted((f) => {
        const tree = String(f.get('tree'));
        void attempt(importErrors, async () => {
          let parsed;
          try {
            parsed = JSON.parse(tree);
          } catch (error) {
            throw new Error(`The tree is not valid JSON: ${/** @type {Error} */ (error).message}`);
          }
          /** @type {{data: {created: number, updated: number, unchanged: number}}} */
          const { data } = await api('POST', '/dealers/import', {
            dealers: Array.isArray(parsed) ? parsed : parsed?.dealers,
          });
          await redraw();
          // The answer's counts are numbers (the console read .length of them: always 0).
          toast(`Imported: ${data.created} created, ${data.updated} updated, ${data.unchanged} unchanged.`);
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
    importErrors,
  );
  return [
    h('h1', {}, 'Dealers'),
    h('div', { class: 'row' }, search, h('span', { class: 'muted' }, `${fmt(list.length)} profiles`)),
    treeHolder,
    create,
    importForm,
  ];
}
