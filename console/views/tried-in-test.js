// @ts-check
// What a partner has tried with its test secret (docs/test-mode.md, "What the operator sees"):
// the signs that it is ready to go live, as a checklist on its page.
import { plural, when } from '../format.js';
import { h } from '../ui.js';

/** @typedef {import('../types.js').TestUse} TestUse */

/**
 * The three signs issue 44 names as readiness (writes, a sync walk, a webhook received), then
 * what else it tried. Each says how often and when last, or "not yet".
 * @type {[keyof Omit<TestUse, 'testListings'>, string, string, boolean][]}
 */
const SIGNS = [
  ['written', 'Wrote listings', 'write', true],
  ['synced', 'Followed a cursor (the sync loop)', 'page', true],
  ['webhooksReceived', 'Received a webhook (answered 2xx)', 'webhook', true],
  ['read', 'Read listings or locations', 'read', false],
  ['events', 'Read the events feed', 'read', false],
];

/** @param {TestUse} use */
export function triedInTest(use) {
  const missing = SIGNS.filter(([key, , , ready]) => ready && !use[key]).map(([, label]) =>
    label.toLowerCase(),
  );
  return h(
    'section',
    { 'aria-labelledby': 'tried-heading', 'data-tried-in-test': '' },
    h('h3', { id: 'tried-heading' }, 'Tried in test'),
    h(
      'p',
      { class: missing.length ? 'warn' : 'ok', 'data-tried-verdict': '' },
      missing.length
        ? `Not tried in test yet: ${missing.join('; ')}.`
        : 'Wrote, synced and received webhooks in test: the signs it is ready to go live.',
    ),
    h(
      'ul',
      { class: 'checklist' },
      SIGNS.map(([key, label, unit]) => {
        const sign = use[key];
        return h(
          'li',
          { 'data-tried': key, 'data-done': sign ? 'yes' : 'no' },
          h('span', { 'aria-hidden': 'true' }, sign ? '✓ ' : '○ '),
          `${label}: `,
          sign ? `${plural(sign.count, unit)}, last ${when(sign.lastAt)}` : 'not yet',
        );
      }),
    ),
    h('p', { 'data-test-listings': '' }, `Holds ${plural(use.testListings, 'test listing')} now.`),
  );
}
