// @ts-check
// How values are written for operators: numbers, times, ids, field names, partners' secret use.

/** @param {number} n */
export const fmt = (n) => Number(n).toLocaleString('en');

/**
 * "1 request", "3 requests".
 * @param {number} n
 * @param {string} word
 */
export const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? '' : 's'}`;

/**
 * Bidirectional controls (embeddings, overrides, isolates, marks): in a name a partner or an
 * operator typed, `‮gnp.exe‬` is drawn "exe.png", and one left open reverses the text after it.
 */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * Text from the API as it may be shown: each bidirectional control written as its code point
 * ([U+202E]), never obeyed. ui.js passes every text and label it draws through this.
 * @param {string} text
 */
export const reveal = (text) =>
  text.replace(BIDI, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`);

/** The browser's time zone and its offset now: every time the console shows is in it. */
export function timeZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const offset = -new Date().getTimezoneOffset();
  const hm = `${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
  return `${zone} (UTC${offset < 0 ? '−' : '+'}${hm})`;
}

/**
 * A moment in local time, short and sortable: 2026-11-26 05:23:44.
 * @param {string | null | undefined} iso
 */
export const when = (iso) => (iso ? new Date(iso).toLocaleString('sv-SE') : 'never');

/**
 * A long id shortened for a table cell; the whole id is in its title, and its page.
 * @param {string} id
 */
export const shortId = (id) => (id.length > 13 ? `${id.slice(0, 12)}…` : id);

/**
 * A time typed in a datetime-local field (local time), as the API's ISO instant; '' stays ''.
 * @param {string} local
 */
export const instant = (local) => (local ? new Date(local).toISOString() : '');

/**
 * An ISO instant as a datetime-local field's value (local time, to the minute), to show a filter kept.
 * @param {string | null} iso
 */
export const localValue = (iso) => {
  const d = new Date(iso ?? '');
  if (!iso || Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** @typedef {import('./types.js').Partner} Partner */

/**
 * When a partner last used a secret, and which one (after a rotation, whether it moved on).
 * @param {Partner} p
 */
export const lastUse = (p) =>
  p.lastUsedAt ? `${when(p.lastUsedAt)}${p.lastUsedKey === 'previous' ? ' (previous secret)' : ''}` : 'never';

/**
 * A dealer as operators name it: its code, and its name when it has one.
 * @param {{locationCode: string, displayName?: string | null, companyName?: string | null}} d
 */
export const dealerLabel = (d) => {
  const name = d.displayName ?? d.companyName;
  return name ? `${d.locationCode} · ${name}` : d.locationCode;
};

/** @type {Record<string, string>} The console's words for the API's field paths; others are shown as they are. */
const FIELDS = {
  name: 'Name',
  locationCode: 'Location code',
  parentLocationCode: 'Parent location code',
  parentId: 'Parent location code',
  city: 'City',
  province: 'Province',
  email: 'Email',
  phone: 'Phone',
  reason: 'Why',
  disabledReason: 'Why',
  displayName: 'Display name',
  companyName: 'Company name',
  rateLimitPerMinute: 'Rate limit',
  'access.rootProfileIds': 'Roots',
  scopes: 'Scopes',
};

/**
 * A field path in words: "dealers.0.children.1.locationCode" is "profile 1 › child 2 › Location code".
 * @param {string} fullPath
 */
export const fieldName = (fullPath) => {
  const path = fullPath.replace(/^(body|query|params)\./, '');
  return (
    FIELDS[path] ??
    path
      .split('.')
      .map((part, i, parts) =>
        /^\d+$/.test(part)
          ? `${parts[i - 1] === 'children' ? 'child' : parts[i - 1] === 'dealers' ? 'profile' : 'item'} ${Number(part) + 1}`
          : part === 'dealers' || part === 'children'
            ? null
            : (FIELDS[part] ?? part),
      )
      .filter(Boolean)
      .join(' › ')
  );
};

/**
 * An issue's message in an operator's words: the validator's wording of a missing field, a length
 * or a count said plainly (`sent`: the value the field had, to say how long it was).
 * @param {{code: string, message: string}} i
 * @param {unknown} [sent]
 */
export function issueText(i, sent) {
  if (i.code === 'invalid_type' && /received undefined/.test(i.message)) return 'required';
  const big = /^Too big: expected string to have <=(\d+) characters?$/.exec(i.message);
  if (big)
    return `at most ${fmt(Number(big[1]))} characters${typeof sent === 'string' ? ` (this has ${fmt(sent.length)})` : ''}`;
  const small = /^Too small: expected string to have >=(\d+) characters?$/.exec(i.message);
  if (small) return Number(small[1]) === 1 ? 'required' : `at least ${small[1]} characters`;
  const few = /^Too small: expected array to have >=(\d+) items?$/.exec(i.message);
  if (few) return `pick at least ${few[1]}`;
  return i.message;
}
