// @ts-check
// A partner's image health (docs/operations.md, "Image health"): its images by check state, the
// commonest problems, and its active listings that cannot go live, each with its reasons and
// every image's check, as the partner reads them.
import { api } from '../admin-api.js';
import { fmt, plural, when } from '../format.js';
import { cards, h, table } from '../ui.js';
import { findListing } from './listing.js';

/** @typedef {import('../types.js').ImageHealth} ImageHealth */

/** The states a check can end in, in the order an operator reads them (docs/images.md). */
const STATES = /** @type {const} */ ([
  'ok',
  'pending',
  'unreachable',
  'not_an_image',
  'too_small',
  'too_large',
]);

/**
 * "not_found ×12, html_page ×3": the commonest first.
 * @param {{code: string, n: number}[]} counts
 */
const tally = (counts) => counts.map((c) => `${c.code} ×${fmt(c.n)}`).join(', ');

/**
 * One image of a listing: its place, URL and check, in words.
 * @param {ImageHealth['notLive'][number]['images'][number]} image
 */
function imageLine(image) {
  const c = image.check;
  const found =
    c.state === 'ok'
      ? `${c.format ?? 'image'} ${c.width ?? '?'}×${c.height ?? '?'}`
      : c.state === 'pending'
        ? 'not checked yet'
        : (c.problem?.message ?? c.state);
  return h(
    'li',
    { 'data-image-state': c.state },
    h('span', { class: c.state === 'ok' ? 'ok' : c.state === 'pending' ? 'muted' : 'bad' }, c.state),
    ` #${image.position + 1}: `,
    h('span', { class: 'url' }, image.url),
    ` (${found}${c.checkedAt ? `, found ${when(c.checkedAt)}` : ''})`,
  );
}

/**
 * The section of the partner page.
 * @param {string} id
 * @returns {Promise<HTMLElement>}
 */
export async function imageHealthOf(id) {
  /** @type {{data: ImageHealth}} */
  const { data } = await api('GET', `/partners/${id}/image-health`);
  const { images, problems, listings, notLive } = data;
  return h(
    'section',
    { 'aria-labelledby': 'image-health-heading', 'data-image-health': '' },
    h('h2', { id: 'image-health-heading' }, 'Image health'),
    cards(
      /** @type {[string, number, string][]} */ ([
        ['images', images.total, 'total'],
        ['broken', images.broken, 'broken'],
        ...STATES.map((s) => /** @type {[string, number, string]} */ ([s, images.byState[s], s])),
      ]).map(([label, n, key]) => [label, fmt(n), { 'data-images': key }]),
    ),
    h(
      'p',
      { 'data-commonest': '' },
      problems.length
        ? `Commonest problems: ${tally(problems.slice(0, 5).map((p) => ({ code: p.code, n: p.images })))}`
        : images.total
          ? 'No broken images.'
          : 'No images.',
    ),
    table(
      ['problem', 'state', { label: 'images', num: true }, { label: 'listings', num: true }],
      problems.map((p) => [h('code', {}, p.code), p.state, fmt(p.images), fmt(p.listings)]),
      'No problems.',
    ),
    // Any one of the partner's listings, by id or reference: its page says all of it.
    findListing(id),
    h(
      'h3',
      { 'data-not-live': '' },
      `Active listings that cannot go live: ${fmt(listings.notLive)} of ${fmt(listings.active)}`,
    ),
    listings.reasons.length
      ? h(
          'p',
          { 'data-reasons': '' },
          `Reasons: ${tally(listings.reasons.map((r) => ({ code: r.code, n: r.listings })))}`,
        )
      : null,
    notLive.length < listings.notLive
      ? h(
          'p',
          { class: 'muted' },
          `The first ${plural(notLive.length, 'listing')} by reference; the partner finds every one with GET /listings?readiness=not_live.`,
        )
      : null,
    table(
      ['reference', 'title', 'why not live', 'images and their checks'],
      notLive.map((l) => [
        h('a', { href: `#/listings/${l.id}`, 'data-reference': '' }, l.externalReference),
        l.title,
        h(
          'ul',
          { class: 'details' },
          l.readiness.reasons.map((r) => h('li', {}, h('code', {}, r.code), `: ${r.message}`)),
        ),
        l.images.length ? h('ul', { class: 'details' }, l.images.map(imageLine)) : 'none',
      ]),
      'Every active listing can go live.',
    ),
  );
}
