// @ts-check
// One listing of any partner, live or test (docs/operations.md, "One listing"): its key fields,
// whether it can go live with every reason, and each image's check and next check, in text. Found
// from a partner's listings that cannot go live, or by id or reference with findListing.
import { api } from '../admin-api.js';
import { dealerLabel, fmt, when } from '../format.js';
import { attempt, field, h, state, submitted, table, text } from '../ui.js';

/** @typedef {import('../types.js').ListingInspection} ListingInspection */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** @param {number} bytes */
const size = (bytes) =>
  bytes >= 1_048_576
    ? `${(bytes / 1_048_576).toFixed(1)} MB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} kB`
      : `${fmt(bytes)} bytes`;

/**
 * What a check found of its size: "1.2 MB, 640×480, image/jpeg", as far as it got.
 * @param {ListingInspection['listing']['images'][number]['check']} c
 */
const found = (c) =>
  [c.bytes === null ? null : size(c.bytes), c.width === null ? null : `${c.width}×${c.height}`, c.contentType]
    .filter(Boolean)
    .join(', ') || '–';

/**
 * The page: #/listings/{id}.
 * @param {string} id
 * @returns {Promise<import('../types.js').Content>}
 */
export async function listing(id) {
  /** @type {{data: ListingInspection}} */
  const { data } = await api('GET', `/listings/${encodeURIComponent(id)}`);
  const { listing: l, partner, mode, images } = data;
  const { live, reasons } = l.readiness;
  /** @type {[string, import('../ui.js').Child | import('../ui.js').Child[]][]} */
  const facts = [
    ['partner', h('a', { href: `#/partners/${partner.id}` }, partner.name)],
    [
      'mode',
      [h('span', { 'data-mode': '' }, mode), mode === 'test' ? ' (written with the test secret)' : ''],
    ],
    ['reference', h('span', { 'data-reference': '' }, l.externalReference)],
    ['id', h('code', {}, l.id)],
    ['title', l.title],
    ['status', h('span', { 'data-status': '' }, l.status)],
    ['price', l.price === null ? 'none' : `${fmt(l.price)} ${l.currency}`],
    ['dealer', h('a', { href: `#/dealers/${l.dealer.id}` }, dealerLabel(l.dealer))],
    ['changed', when(l.changedAt)],
    ['created', when(l.createdAt)],
  ];
  return [
    h('p', {}, h('a', { href: `#/partners/${partner.id}` }, `← ${partner.name}`)),
    h('h1', {}, `Listing ${l.externalReference}`),
    h(
      'dl',
      { class: 'facts' },
      facts.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
    ),
    h('h2', {}, 'Readiness'),
    h('p', { 'data-readiness': live ? 'live' : 'not_live' }, state(live, 'Can go live', 'Cannot go live')),
    reasons.length
      ? h(
          'ul',
          { class: 'details' },
          reasons.map((r) => h('li', { 'data-reason': r.code }, h('code', {}, r.code), `: ${r.message}`)),
        )
      : null,
    h('h2', {}, `Images (${fmt(l.images.length)})`),
    table(
      [{ label: '#', num: true }, 'URL', 'state', 'problem', 'size', 'checked', 'next check'],
      l.images.map((i) => {
        const c = i.check;
        const s = images.find((x) => x.position === i.position);
        return [
          h('span', { 'data-image-position': '' }, String(i.position + 1)),
          h('span', { class: 'url', title: i.url }, i.url),
          h(
            'span',
            {
              'data-image-state': c.state,
              class: c.state === 'ok' ? 'ok' : c.state === 'pending' ? 'muted' : 'bad',
            },
            c.state,
          ),
          c.problem
            ? h(
                'span',
                { 'data-problem': c.problem.code },
                h('code', {}, c.problem.code),
                `: ${c.problem.message}`,
              )
            : '–',
          h('span', { 'data-size': '' }, found(c)),
          h('span', { 'data-checked': '' }, c.checkedAt ? when(c.checkedAt) : 'not yet'),
          s
            ? h(
                'span',
                { 'data-next-check': '' },
                s.checking ? `checking now (lease until ${when(s.nextCheckAt)})` : when(s.nextCheckAt),
                h('br'),
                h(
                  'span',
                  { class: 'muted' },
                  `tried ${fmt(s.attempts)}×${s.failures ? `, failed ${fmt(s.failures)} in a row` : ''}`,
                ),
              )
            : '–',
        ];
      }),
      'No images.',
    ),
  ];
}

/**
 * "Find a listing" of a partner: by the service's id, or by the partner's reference (its live
 * listing, or its test one when ticked). Found, its page opens; not found, the form says so.
 * @param {string} partnerId
 */
export function findListing(partnerId) {
  const errors = h('div');
  const form = h(
    'form',
    {
      class: 'inline',
      onsubmit: submitted((f) => {
        const wanted = text(f, 'listing');
        const test = f.get('test') === 'on';
        if (!wanted) return;
        void attempt(errors, async () => {
          /** @type {(path: string) => Promise<{data: ListingInspection} | null>} */
          const get = (path) =>
            api('GET', path).catch((error) => {
              if (error.status === 404) return null;
              throw error;
            });
          // An id first (the partner's listing or not: an operator may see any); a reference may
          // look like an id, so it is tried next, and its 404 is the one said.
          const found =
            (UUID.test(wanted) ? await get(`/listings/${wanted}`) : null) ??
            /** @type {{data: ListingInspection}} */ (
              await api(
                'GET',
                `/partners/${partnerId}/listings/${encodeURIComponent(wanted)}${test ? '?test=true' : ''}`,
              )
            );
          location.hash = `#/listings/${found.data.listing.id}`;
        });
      }),
    },
    field('Find a listing: its id or the partner’s reference', { name: 'listing', required: true, size: 36 }),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'test' }), 'test listing'),
    h('button', { type: 'submit', class: 'secondary' }, 'Find'),
  );
  return h('div', { 'data-find-listing': '' }, form, errors);
}
