/**
 * The text rules of the service, in one place (docs/contract.md#text):
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

/**
 * What storable text may not hold, as the body of a regular-expression class: the one statement
 * the checks below and the document's text patterns (src/domain/listings/field-types.ts) are
 * built from. With Unicode semantics (the `u` flag, JSON Schema's patterns) a surrogate range
 * matches an unpaired surrogate only: a pair is one code point.
 */
export const UNSTORABLE_CLASS = '\\u0000\\ud800-\\udfff';
const UNSTORABLE = new RegExp(`[${UNSTORABLE_CLASS}]`, 'u');
const UNSTORABLE_ALL = new RegExp(`[${UNSTORABLE_CLASS}]`, 'gu');

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

/**
 * C1 control characters (U+0080 to U+009F), refused in a listing's and a dealer's text fields
 * (docs/contract.md#text). No listing text uses them; their presence means a Windows-1252 file
 * was read as ISO-8859-1 on the way (its 0x80 to 0x9F bytes are letters and signs such as `Š`,
 * `€`, `œ`, `’`; ISO-8859-1 makes them C1 controls: `Škoda` becomes `\u008Akoda`). Tab, CR and LF
 * are C0, and keep each field's own rule.
 */
/** The C1 range as a regular-expression class body: the rule's one statement (document patterns too). */
export const C1_CLASS = '\\u0080-\\u009f';
const C1 = new RegExp(`[${C1_CLASS}]`);

/** Where a text's first C1 control character is (0-based), and which it is; null when none. */
export function c1At(value: string): { index: number; codePoint: string } | null {
  const found = C1.exec(value);
  if (!found) return null;
  return {
    index: found.index,
    codePoint: `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  };
}

/**
 * The issue message for a text with a C1 control character, naming it and its position as a
 * person counts (from 1): "character 1 is U+008A, a C1 control character: …". Null when none.
 */
export function c1Message(value: string): string | null {
  const found = c1At(value);
  if (!found) return null;
  return `character ${found.index + 1} is ${found.codePoint}, a C1 control character: the text was probably read as ISO-8859-1 from a Windows-1252 file; send UTF-8`;
}

/** The issue code of a C1 refusal. */
export const C1_CODE = 'c1_control_character';

/**
 * Every string inside `value` (an object's values, an array's elements, at any depth) that holds a
 * C1 control character, each with its path from `path` ("features.0.name") and its message. Walked
 * without recursion; object keys are not text of the listing (an unknown one is its own issue).
 */
export function c1Issues(value: unknown, path: string): { path: string; message: string; code: string }[] {
  const issues: { path: string; message: string; code: string }[] = [];
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length) {
    const [item, at] = stack.pop()!;
    if (typeof item === 'string') {
      const message = c1Message(item);
      if (message) issues.push({ path: at, message, code: C1_CODE });
    } else if (item !== null && typeof item === 'object') {
      const entries = Array.isArray(item)
        ? item.map((v, i) => [String(i), v] as const)
        : Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        stack.push([child, at === '' ? key : `${at}.${key}`]);
      }
    }
  }
  return issues;
}
