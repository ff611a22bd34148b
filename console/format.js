// @ts-check
// How values are written for operators: numbers, times, ids, field names, partners' secret use.

/** @param {number} n */
export const fmt = (n) => Number(n).toLocaleString('en');

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
 * Whether a partner moved to its new secret, during a rotation's grace. The service counts a use
 * of the current secret only from requests made with it after the rotation (a use before it is
 * the previous secret's), so "moved" is never said from a request made before.
 * @param {Partner} p
 */
export const movedYet = (p) =>
  p.lastUsedKey === 'current'
    ? `The partner has moved to the new secret: its last request (${when(p.lastUsedAt)}) used it.`
    : p.lastUsedKey === 'previous'
      ? `The partner has not moved yet: its last request (${when(p.lastUsedAt)}) used the previous secret. Ending the grace now would cut it off.`
      : 'The partner has made no request yet.';

/**
 * Requests per secret since a rotation, from the usage counted from its time (minute buckets at
 * first): how many with each secret, and when each was last (and the new one first) used. The
 * counts are kept per minute: the rotation's own minute also holds requests made just before it,
 * with the secret that was current then, and they count with the new one.
 * @param {import('./types.js').Usage} usage usage?since=<secretRotatedAt>
 * @param {string} rotatedAt
 * @returns {{counts: string, previousSince: string}}
 */
export function sinceRotation(usage, rotatedAt) {
  const t = usage.totals;
  const withNew = t.requests - t.previousKeyRequests - t.retiredKeyRequests;
  const step = usage.bucketMinutes === 1 ? 'minute' : `${usage.bucketMinutes} minutes`;
  const counts = `Since the rotation at ${when(rotatedAt)} (counted per minute from its minute, where requests just before the rotation count with the new secret): ${fmt(withNew)} ${withNew === 1 ? 'request' : 'requests'} with the new secret, ${fmt(t.previousKeyRequests)} with the previous secret${t.retiredKeyRequests ? `, ${fmt(t.retiredKeyRequests)} refused with a retired one` : ''}.`;
  const firstNew = usage.buckets.find((b) => b.requests - b.previousKeyRequests - b.retiredKeyRequests > 0);
  const lastPrevious = [...usage.buckets].reverse().find((b) => b.previousKeyRequests > 0);
  const previousSince = !lastPrevious
    ? 'No request with the previous secret since the rotation.'
    : !firstNew
      ? `The previous secret was last used in the ${step} from ${when(lastPrevious.start)}; no request with the new secret yet.`
      : lastPrevious.start >= firstNew.start
        ? `The previous secret was last used in the ${step} from ${when(lastPrevious.start)}: still in use since the first request with the new secret (${step} from ${when(firstNew.start)}).`
        : `The previous secret has had no request since the first with the new secret (${step} from ${when(firstNew.start)}); it was last used in the ${step} from ${when(lastPrevious.start)}.`;
  return { counts, previousSince };
}

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
 * An issue's message, with the validator's wording for a missing field said plainly.
 * @param {{code: string, message: string}} i
 */
export const issueText = (i) =>
  i.code === 'invalid_type' && /received undefined/.test(i.message) ? 'required' : i.message;
