// @ts-check
// Hash routes (#/partners/…): which view draws which page, the "Loading…" state, the header
// (who is signed in, the current section), and signing out when the token is refused.
import { api, TOKEN_KEY, whenRefused } from './admin-api.js';
import { timeZone, when } from './format.js';
import { onRedraw, takeFocusRequest } from './redraw.js';
import { REFUSED, showSignIn } from './signin.js';
import { clearToast, errorBox, h, main, nav, who } from './ui.js';
import { audit } from './views/audit.js';
import { dealer } from './views/dealer.js';
import { dealers } from './views/dealers.js';
import { listing } from './views/listing.js';
import { operators } from './views/operators.js';
import { overview } from './views/overview.js';
import { partner } from './views/partner.js';
import { partners } from './views/partners.js';
import { requests } from './views/requests.js';
import { webhook, webhooks } from './views/webhooks.js';

/** @typedef {import('./types.js').Content} Content */
/** @typedef {[RegExp, (m: RegExpMatchArray, q: URLSearchParams) => Promise<Content>, string]} Route */

/** @type {Route[]} */
const ROUTES = [
  [/^\/$/, () => overview(), 'Overview'],
  [/^\/partners$/, () => partners(), 'Partners'],
  [
    /^\/partners\/([\w-]+)$/,
    (m, q) => partner(String(m[1]), q.get('window') === '7d' ? '7d' : '24h'),
    'Partner',
  ],
  [/^\/listings\/([\w-]+)$/, (m) => listing(String(m[1])), 'Listing'],
  [/^\/dealers$/, () => dealers(), 'Dealers'],
  [/^\/dealers\/([\w-]+)$/, (m) => dealer(String(m[1])), 'Dealer'],
  [/^\/requests(?:\/(.+))?$/, (m, q) => requests(m[1] ? decodeURIComponent(m[1]) : undefined, q), 'Requests'],
  [/^\/webhooks$/, (_m, q) => webhooks(q), 'Webhooks'],
  [/^\/webhooks\/([\w-]+)$/, (m) => webhook(String(m[1])), 'Webhook'],
  [/^\/audit$/, (_m, q) => audit(q), 'Audit log'],
  [/^\/operators$/, () => operators(), 'Operators'],
];

/** @type {ReturnType<typeof setInterval> | undefined} */
let refreshTimer;
/** How often the overview follows the traffic by itself. */
const REFRESH_MS = 10_000;
/** When the overview last had its figures (kept across an outage, to say how old they are). */
let overviewAt = '';
/** Counts renders: an answer for a page the operator already left is dropped. */
let renderCount = 0;

/** @param {string} [message] */
function signOut(message) {
  // Pages still loading with the old token are dropped; so is a refresh.
  renderCount++;
  clearInterval(refreshTimer);
  showSignIn(message);
}

/**
 * Draws the page of the current hash. `navigation`: the operator asked for another page, so the
 * old one gives way to "Loading…" at once (a slow answer left it under the new link); otherwise
 * (a refresh after an action) it stays until the new one is ready. `keep`: shown after the
 * page's heading (a secret just issued, kept across the redraw).
 * @param {import('./redraw.js').DrawOptions} [options]
 */
async function render(options = {}) {
  clearInterval(refreshTimer);
  if (!sessionStorage.getItem(TOKEN_KEY)) return signOut();
  const count = ++renderCount;
  const [path = '/', search = ''] = (location.hash.slice(1) || '/').split('?');
  const route = ROUTES.find(([pattern]) => pattern.test(path));
  if (!route) {
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Overview')));
    return;
  }
  const [pattern, view, title] = route;
  main.setAttribute('aria-busy', 'true');
  if (options.navigation) {
    main.replaceChildren(h('p', { class: 'loading', role: 'status' }, 'Loading…'));
    document.title = `${title} (loading) · Forecourt console`;
  }
  try {
    /** @type {{data: {name: string}}} */
    const me = await api('GET', '/operators/me');
    if (count !== renderCount) return;
    nav.hidden = false;
    who.replaceChildren(
      h('span', {}, `Signed in as ${me.data.name}`),
      h('button', { type: 'button', onclick: () => signOut('Signed out.') }, 'Sign out'),
    );
    for (const a of nav.querySelectorAll('a')) {
      const section = String(a.getAttribute('href')).slice(1);
      const current = section === '/' ? path === '/' : path.startsWith(section);
      if (current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const content = (
      await view(/** @type {RegExpMatchArray} */ (path.match(pattern)), new URLSearchParams(search))
    )
      .flat()
      .filter((x) => x instanceof Node);
    // The operator went elsewhere meanwhile (or was signed out): that page is drawn, not this one.
    if (count !== renderCount) return;
    document.title = `${title} · Forecourt console`;
    // What is kept goes under the page's heading (a back link may come before it).
    const at = content.findIndex((node) => node instanceof HTMLHeadingElement && node.tagName === 'H1') + 1;
    main.replaceChildren(
      ...content.slice(0, at),
      ...(options.keep ? [options.keep] : []),
      ...content.slice(at),
    );
    main.removeAttribute('aria-busy');
    if (title === 'Overview') {
      overviewAt = new Date().toISOString();
      main.querySelector('[data-updated]')?.replaceChildren(updated());
    }
  } catch (error) {
    if (/** @type {any} */ (error).status === 401 || count !== renderCount) return;
    main.removeAttribute('aria-busy');
    main.replaceChildren(
      h('h1', {}, title === 'Overview' ? 'Overview' : 'Something went wrong'),
      errorBox(error),
      // Said where the figures were: try again now, or the page tries by itself (the overview).
      h('p', {}, h('button', { type: 'button', onclick: () => void render() }, 'Retry')),
      ...(title === 'Overview' ? [h('p', { class: 'muted', 'data-updated': '' }, updated())] : []),
    );
    document.title = `${title} (failed) · Forecourt console`;
  } finally {
    // The overview follows the traffic by itself, after an outage too (its refresh stopped for
    // good at the first failure), except while the operator reads a chart's values. A partner's
    // page has forms: it refreshes on demand.
    if (title === 'Overview' && count === renderCount) {
      clearInterval(refreshTimer);
      refreshTimer = setInterval(() => {
        if (!main.querySelector('.chart:hover, .chart:focus')) void render();
      }, REFRESH_MS);
    }
  }
}

/** "Last updated 12:04:10, refreshed every 10 s": how old the overview's figures are. */
const updated = () =>
  overviewAt
    ? `Last updated ${when(overviewAt).slice(11)} (${when(overviewAt).slice(0, 10)}); refreshed every ${REFRESH_MS / 1000} s.`
    : `Not updated yet; tried every ${REFRESH_MS / 1000} s.`;

/** Starts the console: draws the page of the hash, and each next one. */
export function start() {
  whenRefused(() => signOut(REFUSED));
  onRedraw(render);
  window.addEventListener('hashchange', () => {
    // A message belongs to the page it was said on.
    clearToast();
    window.scrollTo(0, 0);
    // The new page's start, under the header: focusing <main> must not scroll it behind the header.
    const focus = takeFocusRequest();
    void render({ navigation: true }).then(() => {
      // A filter applied: its results, said with their count (views/requests.js); else the page's start.
      const target = focus ? /** @type {HTMLElement | null} */ (main.querySelector(focus)) : null;
      if (target) {
        target.focus({ preventScroll: true });
        target.scrollIntoView({ block: 'nearest' });
      } else {
        main.focus({ preventScroll: true });
        window.scrollTo(0, 0);
      }
    });
  });
  const zone = document.getElementById('time-zone');
  if (zone) zone.textContent = `Times are in ${timeZone()}.`;
  void render({ navigation: true });
}
