/**
 * The text rules of the service, in one place (decisions.md, "Transport and envelope"):
 *
 * - What a client sends is kept exactly as sent or refused: never changed on the way in. JSON may
 *   carry U+0000 and unpaired UTF-16 surrogates as escapes (`"\u0000"`, `"\ud800"`), but
 *   PostgreSQL's `text` and `jsonb` refuse both (a lone surrogate would become U+FFFD on the way
 *   out of the driver): so such text is refused where it enters (`isStorableText`, `unstorableAt`).
 * - What the service keeps from outside for people to read (a receiver's answer, a parser's
 *   message, an unknown path quoted in an error) is made safe instead (`keepable`): U+0000 and
 *   unpaired surrogates replaced by U+FFFD, cut to a length, so nothing anyone sends can stop the
 *   service from writing its records.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must be found
const UNSTORABLE = /\u0000|\p{Cs}/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must be replaced
const UNSTORABLE_ALL = /\u0000|\p{Cs}/gu;

/** Text PostgreSQL keeps as sent: no U+0000, no unpaired surrogate. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

export const STORABLE_MESSAGE = 'must not contain U+0000 or unpaired surrogate characters';

/** What is wrong with a text and where (its first unstorable character), or null when nothing is. */
export function unstorableAt(value: string): { index: number; what: string } | null {
  const found = UNSTORABLE.exec(value);
  if (!found) return null;
  const unit = found[0].charCodeAt(0);
  return {
    index: found.index,
    what: unit === 0 ? 'U+0000 (NUL)' : `an unpaired surrogate U+${unit.toString(16).toUpperCase()}`,
  };
}

/** Longest text of outside origin kept in a record (a message, a path). */
export const KEEP_CHARS = 1000;

/**
 * Text from outside made safe to keep for people to read: U+0000 and unpaired surrogates become
 * U+FFFD, and past `max` characters it is cut, saying how long it was. Never used on a client's
 * data that is stored as data: that is refused instead.
 */
export function keepable(value: string, max = KEEP_CHARS): string {
  const safe = UNSTORABLE.test(value) ? value.replace(UNSTORABLE_ALL, '\uFFFD') : value;
  if (safe.length <= max) return safe;
  // Never cut between the two halves of a surrogate pair (that would make a new unpaired one).
  let end = max;
  const last = safe.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${safe.slice(0, end)}… (${safe.length} characters)`;
}

/** `keepable` for a value that may be absent. */
export const keepableOrNull = (value: string | null | undefined, max = KEEP_CHARS): string | null =>
  value === null || value === undefined ? null : keepable(value, max);
