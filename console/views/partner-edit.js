// @ts-check
// Editing a partner: its name, scopes and access (roots picked in the dealer tree).
import { api } from '../admin-api.js';
import { redraw } from '../redraw.js';
import { attempt, field, h, submitted, text, toast } from '../ui.js';
import { accessFields, scopeBoxes } from './partners.js';

/**
 * @param {import('../types.js').Partner} p
 * @param {import('../types.js').Dealer[]} dealers
 */
export function editPartner(p, dealers) {
  const errors = h('div');
  const access = accessFields(dealers, p.access, 'edit-root');
  return h(
    'form',
    {
      class: 'panel',
      'aria-label': `Edit ${p.name}`,
      onsubmit: submitted((f) => {
        void attempt(errors, async () => {
          await api('PATCH', `/partners/${p.id}`, {
            name: text(f, 'name'),
            scopes: f.getAll('scope'),
            access: access.value(f),
          });
          await redraw();
          toast('Partner saved.');
        });
      }),
    },
    field('Name', { name: 'name', required: true, value: p.name }),
    scopeBoxes(p.scopes),
    access.element,
    h('p', {}, h('button', { type: 'submit' }, 'Save partner')),
    errors,
  );
}
