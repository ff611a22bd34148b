// @ts-check
// Requests and errors over time, drawn as SVG of our own: a time axis, a value scale, and the
// values of one bucket on hover, or on focus with the arrow keys. No library: a charting library
// of a few dozen KB would bring its own styles and a canvas that axe-core and a screen reader
// cannot read, for one kind of chart (docs/operations.md: the console).
import { reveal } from './format.js';

const NS = 'http://www.w3.org/2000/svg';

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @param {string} [text]
 */
function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * A round top for the value scale, with four steps of 1, 2, 3 or 5 × 10ⁿ (or 1 below 4).
 * @param {number} max
 */
export function scale(max) {
  if (max <= 4) return { top: 4, step: 1 };
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = /** @type {number} */ ([1, 2, 3, 5, 10].map((m) => m * power).find((s) => s >= raw));
  return { top: step * 4, step };
}

/** @param {number} n */
const fmt = (n) => Number(n).toLocaleString('en');

/** @type {CanvasRenderingContext2D | null} */
let measurer = null;
/**
 * How wide a label of the axes is drawn (12 px, the page's font): labels are spaced by what they
 * need, not by a guess (the 7-day chart's first two overlapped).
 * @param {string} text
 */
function textWidth(text) {
  measurer ??= document.createElement('canvas').getContext('2d');
  if (!measurer) return text.length * 7.5;
  measurer.font = `12px ${getComputedStyle(document.body).fontFamily}`;
  return measurer.measureText(text).width;
}
/** @param {number} n @param {string} word */
const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? '' : 's'}`;

/** @typedef {{requests: number, clientErrors: number, serverErrors: number, rateLimited?: number}} Counts */

/**
 * A chart of `buckets` ({requests, clientErrors, serverErrors, rateLimited?}), each starting at
 * `startOf(bucket)` and lasting `stepMs`. `width` is the pixels it has: text stays readable at
 * any width, since the drawing is made for it rather than stretched.
 * @template {Counts} B
 * @param {B[]} buckets
 * @param {{label: string, startOf: (b: B) => string, stepMs: number, width: number}} options
 */
export function chart(buckets, { label, startOf, stepMs, width }) {
  const W = Math.max(280, Math.round(width));
  const H = 190;
  const pad = { left: 44, right: 10, top: 12, bottom: 28 };
  const pw = W - pad.left - pad.right;
  const ph = H - pad.top - pad.bottom;
  const n = Math.max(1, buckets.length);
  const bw = pw / n;
  const { top, step } = scale(Math.max(0, ...buckets.map((b) => b.requests)));
  // Nothing to draw: no scale is invented for it (it showed 0–4), and the chart says so.
  const empty = buckets.every((b) => b.requests === 0);
  /** @param {number} v */
  const y = (v) => pad.top + ph - (v / top) * ph;
  const days = stepMs >= 3_600_000 * 6;
  /** @param {number} ms */
  const time = (ms) =>
    new Date(ms).toLocaleString('en-GB', {
      ...(days ? { weekday: 'short', day: 'numeric' } : {}),
      hour: '2-digit',
      minute: '2-digit',
    });

  const el = svg('svg', {
    class: 'chart',
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    role: 'group',
    tabindex: 0,
    'aria-label': `${reveal(label)}. Arrow keys read one ${days ? '6-hour period' : stepMs >= 3_600_000 ? 'hour' : 'minute'} after another.`,
  });

  // The value scale: gridlines with their numbers.
  for (let v = 0; !empty && v <= top; v += step) {
    el.append(
      svg('line', { class: 'grid', x1: pad.left, x2: W - pad.right, y1: y(v), y2: y(v) }),
      svg('text', { class: 'y-tick', x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v)),
    );
  }
  // The bars: requests, their errors on top.
  buckets.forEach((b, i) => {
    const x = pad.left + i * bw + (bw > 4 ? 1 : 0);
    const w = Math.max(1, bw - (bw > 4 ? 2 : 0));
    const errors = b.clientErrors + b.serverErrors;
    el.append(svg('rect', { class: 'req', x, y: y(b.requests), width: w, height: y(0) - y(b.requests) }));
    if (errors > 0)
      el.append(svg('rect', { class: 'err', x, y: y(errors), width: w, height: y(0) - y(errors) }));
  });
  // The time axis: each label starts at its bucket's start; every few buckets, as many as fit
  // with a gap between them, the widest label measured.
  el.append(svg('line', { class: 'axis', x1: pad.left, x2: W - pad.right, y1: y(0), y2: y(0) }));
  const labels = buckets.map((b) => time(Date.parse(startOf(b))));
  const widest = Math.max(0, ...labels.map(textWidth));
  const every = Math.max(1, Math.ceil((widest + 12) / bw));
  for (let i = 0; i < buckets.length; i += every) {
    const x = pad.left + i * bw;
    if (x + widest > W) break;
    el.append(
      svg('line', { class: 'axis', x1: x, x2: x, y1: y(0), y2: y(0) + 4 }),
      svg('text', { class: 'x-tick', x, y: H - 8, 'text-anchor': 'start' }, labels[i] ?? ''),
    );
  }

  // One bucket picked by the pointer or the keyboard: a band behind it, its values said below.
  const band = svg('rect', {
    class: 'band',
    y: pad.top,
    height: ph,
    width: bw,
    x: -bw,
    'pointer-events': 'none',
  });
  el.prepend(band);
  const readout = document.createElement('p');
  readout.className = 'readout';
  readout.setAttribute('aria-live', 'polite');
  readout.textContent = empty
    ? 'No requests in this period.'
    : 'Point at a bar, or focus the chart and use ← →, to read its values.';
  let picked = -1;
  /** @param {number} i */
  const pick = (i) => {
    if (!buckets.length || empty) return;
    picked = Math.min(buckets.length - 1, Math.max(0, i));
    const b = /** @type {B} */ (buckets[picked]);
    const from = Date.parse(startOf(b));
    band.setAttribute('x', String(pad.left + picked * bw));
    readout.textContent =
      `${time(from)}–${time(from + stepMs)}: ${plural(b.requests, 'request')}, ` +
      `${fmt(b.clientErrors)} 4xx${b.rateLimited ? ` (${fmt(b.rateLimited)} rate-limited)` : ''}, ${fmt(b.serverErrors)} 5xx`;
  };
  el.addEventListener('pointermove', (event) => {
    const box = el.getBoundingClientRect();
    const x = ((event.clientX - box.left) * W) / box.width - pad.left;
    if (x >= 0 && x < pw) pick(Math.floor(x / bw));
  });
  el.addEventListener('focus', () => {
    if (picked < 0) pick(buckets.length - 1);
  });
  el.addEventListener('keydown', (event) => {
    /** @type {Record<string, number>} */
    const keys = { ArrowLeft: picked - 1, ArrowRight: picked + 1, Home: 0, End: buckets.length - 1 };
    const to = keys[event.key];
    if (to === undefined) return;
    event.preventDefault();
    pick(to);
  });

  const legend = document.createElement('figcaption');
  legend.className = 'legend';
  for (const [cls, text] of [
    ['', 'requests'],
    ['e', 'errors (4xx, 5xx)'],
  ]) {
    const span = document.createElement('span');
    if (cls) span.className = cls;
    span.textContent = text;
    legend.append(span);
  }
  const figure = document.createElement('figure');
  figure.className = 'panel chart-box';
  figure.append(el, readout, legend);
  return figure;
}
