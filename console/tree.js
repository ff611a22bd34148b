// @ts-check
// The dealer tree: children by parent, ancestors, and a picker of roots (checkboxes in the tree,
// searchable) used wherever a partner's access is chosen.
import { dealerLabel, reveal } from './format.js';
import { h } from './ui.js';

/** @typedef {import('./types.js').Dealer} Dealer */

/**
 * Children by parent id ('' for the top), each list sorted by location code.
 * @param {Dealer[]} dealers
 */
export function childrenByParent(dealers) {
  /** @type {Map<string, Dealer[]>} */
  const byParent = new Map();
  for (const d of dealers) {
    const key = d.parentId ?? '';
    const list = byParent.get(key) ?? [];
    list.push(d);
    byParent.set(key, list);
  }
  for (const list of byParent.values()) list.sort((a, b) => a.locationCode.localeCompare(b.locationCode));
  return byParent;
}

/**
 * @param {Dealer} d
 * @param {string} q lower case
 */
export const matches = (d, q) =>
  [d.locationCode, d.displayName, d.companyName, d.city].some((v) => v?.toLowerCase().includes(q));

/**
 * A tree of the dealers, narrowed to those matching `q` (and their ancestors): each node drawn by `node`.
 * @param {Map<string, Dealer[]>} byParent
 * @param {string} q
 * @param {(d: Dealer) => (Node | string | null)[]} node
 * @returns {HTMLUListElement | null}
 */
export function drawTree(byParent, q, node) {
  /** @param {Dealer} d @returns {boolean} */
  const keep = (d) => !q || matches(d, q) || (byParent.get(d.id) ?? []).some(keep);
  /** @param {string} parent @returns {HTMLUListElement | null} */
  const branch = (parent) => {
    const children = (byParent.get(parent) ?? []).filter(keep);
    if (!children.length) return null;
    return h(
      'ul',
      { class: parent ? 'tree' : 'tree root' },
      children.map((d) => h('li', {}, ...node(d), branch(d.id))),
    );
  };
  return branch('');
}

/**
 * Checkboxes in the dealer tree to pick a partner's roots (it sees each and everything under it),
 * with a search; `picked()` answers the ids checked. A checked root's children show that they are
 * covered already.
 * @param {Dealer[]} dealers
 * @param {string[]} initial ids checked at first
 * @param {string} idPrefix unique per form (labels point at their inputs)
 */
export function rootPicker(dealers, initial, idPrefix) {
  const byParent = childrenByParent(dealers);
  const chosen = new Set(initial);
  const holder = h('div', { class: 'picker' });
  const search = h('input', {
    type: 'search',
    'aria-label': 'Search the dealer tree for roots',
    placeholder: 'Search code, name, city',
  });
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const byId = new Map(dealers.map((d) => [d.id, d]));
  const say = () => {
    summary.textContent = chosen.size
      ? reveal(
          `Picked: ${[...chosen]
            .map((id) => {
              const d = byId.get(id);
              return d ? dealerLabel(d) : id;
            })
            .join(', ')}`,
        )
      : 'No root picked yet.';
  };
  const draw = () => {
    const tree = drawTree(byParent, search.value.trim().toLowerCase(), (d) => [
      h('input', {
        type: 'checkbox',
        id: `${idPrefix}-${d.id}`,
        value: d.id,
        checked: chosen.has(d.id),
        onchange: /** @param {Event} e */ (e) => {
          const box = /** @type {HTMLInputElement} */ (e.target);
          if (box.checked) chosen.add(d.id);
          else chosen.delete(d.id);
          say();
        },
      }),
      h('label', { for: `${idPrefix}-${d.id}` }, ` ${dealerLabel(d)}`),
    ]);
    holder.replaceChildren(
      tree ?? h('p', { class: 'muted' }, dealers.length ? 'Nothing matches.' : 'No dealer profiles yet.'),
    );
  };
  search.addEventListener('input', draw);
  draw();
  say();
  return {
    element: h('div', { class: 'root-picker' }, search, holder, summary),
    picked: () => [...chosen],
  };
}

/**
 * A partner's access in words, dealers by name (never ids).
 * @param {import('./types.js').Partner['access']} access
 * @param {Map<string, Dealer>} dealersById
 */
export const accessText = (access, dealersById) =>
  access.scope === 'global'
    ? 'global: every dealer'
    : access.rootProfileIds
        .map((id) => {
          const d = dealersById.get(id);
          return d ? dealerLabel(d) : `a deleted profile (${id})`;
        })
        .join(', ');
