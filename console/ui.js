// @ts-check
// The console's DOM helpers. Text from the API is only ever set as text (never as HTML): a partner
// or dealer name is data. And as text that cannot deceive: every text and label drawn here shows a
// bidirectional control as its code point (format.js reveal), wherever the name comes from.
import { chart as drawChart } from './chart.js';
import { fieldName, issueText, reveal } from './format.js';

/** @typedef {Node | string | number | null | undefined | false} Child */

/** Attributes a person reads (a screen reader, a tooltip): revealed like text. A value, never. */
const READ = new Set(['aria-label', 'title', 'placeholder', 'alt']);

/**
 * An element: h('a', { href: '#/', class: 'x', onclick: fn }, 'text', child, …). Attributes whose
 * value is undefined, null or false are left out; `true` sets an empty one.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (READ.has(key)) el.setAttribute(key, reveal(String(value)));
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(reveal(String(child))));
  }
  return el;
}

/**
 * confirm(), with names in the question revealed as on the page.
 * @param {string} question
 */
export const ask = (question) => confirm(reveal(question));

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
export const main = byId('main');
export const nav = byId('nav');
export const who = byId('who');

/** @type {ReturnType<typeof setTimeout> | undefined} */
let toastTimer;
/** @param {string} message said politely (the toast is a status region), gone after 6 s */
export function toast(message) {
  const el = byId('toast');
  el.textContent = reveal(message);
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.textContent = '';
  }, 6000);
}

/** The toast's message ends when another action starts: a success is never shown beside a new error. */
export function clearToast() {
  byId('toast').textContent = '';
}

/**
 * Said to a screen reader, not shown: what a change of the page did (a filter's result count).
 * @param {string} message
 */
export function announce(message) {
  const el = byId('announce');
  el.textContent = '';
  // A new text node a moment later: a live region says a change, even of the same words.
  setTimeout(() => {
    el.textContent = reveal(message);
  }, 50);
}

/**
 * What went wrong, said once, in the operator's words: shown next to the form that caused it.
 * Refused fields are listed one by one (the API's message repeats the first of them); a failure
 * of the service itself gives the request id to quote, never its code names.
 * @param {any} error an ApiError, or an Error of the console's own
 */
export function errorBox(error) {
  let text = error.message;
  /** @type {import('./admin-api.js').Issue[]} */
  let issues = [];
  if (error.status === 0)
    text = 'The service did not answer. Check that it is running and that you are online, then try again.';
  else if (error.status >= 500)
    text = `The service failed to do this (a fault on its side, not in what you sent). Try again; if it fails again, quote request id ${error.requestId ?? 'unknown'} to whoever runs it.`;
  else if (error.issues?.length) {
    text = error.issues.length === 1 ? 'Please correct this field:' : 'Please correct these fields:';
    issues = error.issues;
  }
  /** @param {string} path the value the request sent at it (body.displayName, name…) */
  const sentAt = (path) =>
    path
      .replace(/^(body|query|params)\./, '')
      .split('.')
      .reduce((/** @type {any} */ v, k) => (v && typeof v === 'object' ? v[k] : undefined), error.sent);
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('p', {}, text),
    issues.length
      ? h(
          'ul',
          {},
          issues.map((i) => h('li', {}, `${fieldName(i.path)}: ${issueText(i, sentAt(i.path))}`)),
        )
      : null,
  );
}

/**
 * A labelled input: the label's text is its accessible name.
 * @param {string} label
 * @param {Record<string, any>} attrs
 */
export const field = (label, attrs) => h('label', {}, label, h('input', attrs));

/**
 * A labelled select of [value, text] options.
 * @param {string} label
 * @param {string} name
 * @param {[string, string][]} options
 * @param {string} [selected]
 */
export const select = (label, name, options, selected = '') =>
  h(
    'label',
    {},
    label,
    h(
      'select',
      { name },
      options.map(([value, text]) => h('option', { value, selected: value === selected }, text)),
    ),
  );

/**
 * A form's submit handler: the browser's own submission is stopped; the handler gets the form's fields.
 * @param {(fields: FormData, form: HTMLFormElement) => void} handler
 */
export const submitted = (handler) => /** @param {SubmitEvent} event */ (event) => {
  event.preventDefault();
  const form = /** @type {HTMLFormElement} */ (event.target);
  handler(new FormData(form), form);
};

/**
 * A form field's text, trimmed ('' when absent).
 * @param {FormData} f
 * @param {string} name
 */
export const text = (f, name) => String(f.get(name) ?? '').trim();

/**
 * Runs an action from a form; errors appear in `slot`, never lost.
 * @param {HTMLElement} slot
 * @param {() => Promise<void>} action
 */
export async function attempt(slot, action) {
  slot.replaceChildren();
  clearToast();
  try {
    await action();
  } catch (error) {
    // A refused token has already put up the sign-in form with the reason.
    if (/** @type {any} */ (error).status === 401) return;
    slot.replaceChildren(errorBox(error));
  }
}

/** @typedef {string | {label: string, num?: boolean, class?: string}} Header */

/**
 * A table in a box that scrolls sideways on a phone (never the page); `empty` when there are no rows.
 * @param {Header[]} headers
 * @param {Child[][]} rows
 * @param {string} empty
 */
export const table = (headers, rows, empty) => {
  /** @param {Header | undefined} x */
  const cls = (x) => (typeof x === 'object' ? (x.num ? 'num' : x.class) : undefined);
  /** @param {Header | undefined} x */
  const name = (x) => (typeof x === 'object' ? x.label : (x ?? ''));
  return rows.length
    ? h(
        'div',
        // Focusable: on a phone it scrolls sideways, and a keyboard must be able to scroll it too.
        { class: 'table-wrap', tabindex: 0 },
        h(
          // Roles said outright: on a phone the rows are drawn as cards (console.css), and a table
          // drawn with display: block would otherwise lose them for a screen reader.
          'table',
          { role: 'table' },
          h(
            'thead',
            { role: 'rowgroup' },
            h(
              'tr',
              { role: 'row' },
              headers.map((x) => h('th', { scope: 'col', role: 'columnheader', class: cls(x) }, name(x))),
            ),
          ),
          h(
            'tbody',
            { role: 'rowgroup' },
            rows.map((cells) =>
              h(
                'tr',
                { role: 'row' },
                // data-label: the column's name, shown beside the value on a phone.
                cells.map((c, i) =>
                  h(
                    'td',
                    { role: 'cell', class: cls(headers[i]), 'data-label': name(headers[i]) },
                    h('div', {}, c),
                  ),
                ),
              ),
            ),
          ),
        ),
      )
    : h('p', { class: 'muted' }, empty);
};

/**
 * Number cards: [label, value, extra attributes of the number].
 * @param {[string, Child, Record<string, any>?][]} items
 */
export const cards = (items) =>
  h(
    'div',
    { class: 'cards' },
    items.map(([label, value, attrs]) =>
      h('div', { class: 'card' }, h('div', { class: 'n', ...attrs }, value), h('div', { class: 'l' }, label)),
    ),
  );

/**
 * A chart as wide as its place on the page, drawn again when that width changes (a window resized,
 * a phone turned): drawn for one width and stretched to another, its text was 4 px high.
 * @template {import('./chart.js').Counts} B
 * @param {B[]} buckets
 * @param {{label: string, startOf: (b: B) => string, stepMs: number}} options
 */
export function chart(buckets, options) {
  let figure = drawChart(buckets, { ...options, width: main.clientWidth - 2 * 16 - 2 * 15 });
  const holder = h('div', { class: 'chart-holder' }, figure);
  new ResizeObserver(() => {
    const svg = figure.querySelector('svg');
    if (!holder.isConnected || !svg) return;
    // The svg is as wide as its box (CSS); it was drawn for the width in its attribute.
    const width = Math.max(280, Math.round(svg.getBoundingClientRect().width));
    if (Math.abs(width - Number(svg.getAttribute('width'))) < 2) return;
    // Kept: the bucket read with the keyboard, so a resize does not lose the operator's place.
    const focused = figure.contains(document.activeElement);
    const next = drawChart(buckets, { ...options, width });
    figure.replaceWith(next);
    figure = next;
    if (focused) /** @type {SVGElement} */ (figure.querySelector('svg'))?.focus({ preventScroll: true });
  }).observe(holder);
  return holder;
}

/**
 * A secret shown once, with a Copy button: an alert (said at once), focusable, so `showSecret`
 * can put it in view with the focus on it.
 * @param {string} title
 * @param {string} secret
 * @param {string} note
 */
export function secretBox(title, secret, note) {
  return h(
    'div',
    { class: 'secret', role: 'alert', tabindex: -1, 'aria-label': title },
    h('strong', {}, title),
    h('p', {}, h('code', { class: 'mono' }, secret)),
    h('p', {}, note),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => navigator.clipboard?.writeText(secret).then(() => toast('Copied.')),
      },
      'Copy',
    ),
  );
}

/**
 * Brings a secret just shown into view, under the header, and moves the focus to it: the page
 * stayed scrolled at the form clicked, with the secret drawn far above it, and the focus on
 * <body> (an operator clicked again, or left and lost it).
 * @param {HTMLElement} box
 */
export function showSecret(box) {
  box.scrollIntoView({ block: 'nearest' });
  box.focus({ preventScroll: true });
}

/**
 * A state in words, coloured by what it means (the word says it too, not only the colour).
 * @param {boolean} good
 * @param {string} yes
 * @param {string} no
 */
export const state = (good, yes, no) => h('span', { class: good ? 'ok' : 'bad' }, good ? yes : no);

/**
 * A list fetched with filters the operator typed: their refusal (400, a status such as "abc") is
 * said in `slot`, beside the filters, and the list is `empty`, instead of the whole page failing.
 * @template T
 * @param {Promise<T>} fetching
 * @param {T} empty
 * @param {HTMLElement} slot
 * @returns {Promise<T>}
 */
export async function filtered(fetching, empty, slot) {
  try {
    return await fetching;
  } catch (error) {
    if (/** @type {any} */ (error).status !== 400) throw error;
    slot.replaceChildren(errorBox(error));
    return empty;
  }
}
