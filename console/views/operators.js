// @ts-check
// Operator tokens: one per person, shown once; when each was last used; revoke.
import { api } from '../admin-api.js';
import { when } from '../format.js';
import { redraw } from '../redraw.js';
import { ask, attempt, field, h, secretBox, showSecret, submitted, table, toast } from '../ui.js';

/** @typedef {import('../types.js').Operator} Operator */

/** @returns {Promise<import('../types.js').Content>} */
export async function operators() {
  /** @type {{data: Operator[]}} */
  const { data: list } = await api('GET', '/operators');
  const errors = h('div');
  const form = h(
    'form',
    {
      class: 'panel inline',
      onsubmit: submitted((f, formElement) => {
        void attempt(errors, async () => {
          /** @type {{data: Operator & {token: string}}} */
          const { data } = await api('POST', '/operators', { name: f.get('name') });
          const box = secretBox(
            `Operator token of ${data.name}`,
            data.token,
            'Shown only now. It signs in to this console and the CLI (--token).',
          );
          formElement.reset();
          await redraw({ keep: box });
          showSecret(box);
        });
      }),
    },
    field('Name of the operator', { name: 'name', required: true }),
    h('button', { type: 'submit' }, 'Create token'),
  );
  /** @param {Operator} o */
  const revoke = (o) =>
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Revoke ${o.name}'s token`,
        onclick: () => {
          if (!ask(`Revoke ${o.name}'s token? It is refused from its next request.`)) return;
          void attempt(errors, async () => {
            await api('DELETE', `/operators/${o.id}`);
            await redraw();
            toast(`Revoked ${o.name}'s token.`);
          });
        },
      },
      'Revoke',
    );
  return [
    h('h1', {}, 'Operators'),
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
