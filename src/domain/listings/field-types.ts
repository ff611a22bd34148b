import { z } from 'zod';
import { ENUMS, type EnumName, isValue, matchEnum, refusalOf } from '../enums.js';
import { messages } from '../messages.js';
import { C1_CLASS, isStorableText, STORABLE_MESSAGE, UNSTORABLE_CLASS } from '../text.js';

/**
 * The value types of the listing write shape: each knows its bounds (docs/contract.md#validation) and
 * says in its message what it accepts. input.ts puts them together into the schema.
 */

const REFERENCE_RULE = 'must be 1 to 128 characters, without control characters or leading/trailing spaces';

// No control character anywhere (C0, DEL, C1), and no white space at either end. Written so that
// the JSON Schema of the document carries it too (a `pattern` every validator understands).
const REFERENCE_PATTERN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  /^[^\s\u0000-\u001f\u007f-\u009f](?:[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f])?$/;

/**
 * A partner's reference: the one statement of the rule, for bodies, paths, queries and the
 * document. 1 to 128 characters, no control characters, no outer white space, storable text.
 */
export const referenceSchema = z
  .string({ error: REFERENCE_RULE })
  .min(1, REFERENCE_RULE)
  .max(128, REFERENCE_RULE)
  .regex(REFERENCE_PATTERN, REFERENCE_RULE)
  // Fix (write tests): a bulk item's reference with an unpaired surrogate ("\ud800" in JSON) passed
  // and then broke the jsonb batch parameter: a 500 instead of INVALID_REFERENCE.
  .refine((value) => isStorableText(value), REFERENCE_RULE)
  .describe(
    'Your own unique reference: 1 to 128 characters, no control characters, no leading or trailing spaces.',
  );

export function isValidReference(value: unknown): value is string {
  return referenceSchema.safeParse(value).success;
}
export const referenceRule = REFERENCE_RULE;

// The text rule (src/domain/text.ts), re-exported for the field types' users.
export { isStorableText, STORABLE_MESSAGE };

/**
 * The text rules as the document's patterns (issue 40: a validator must know what the service
 * refuses), built from the rules' own statements in src/domain/text.ts, never retyped: storable
 * text (no U+0000, no unpaired surrogate) everywhere, and no C1 control character in a listing's
 * text (docs/contract.md#text).
 */
const LISTING_TEXT_REFUSED = `${UNSTORABLE_CLASS}${C1_CLASS}`;
const anyText = (refused: string) => `^[^${refused}]*$`;
const nonBlank = (refused: string) => `^[^${refused}]*[^\\s${refused}][^${refused}]*$`;
/** Any storable text (a query's, a webhook endpoint's description). */
export const TEXT_PATTERN = anyText(UNSTORABLE_CLASS);
/** Storable text with a character that is not white space (a minimum of 1 after trimming). */
export const NON_BLANK_TEXT_PATTERN = nonBlank(UNSTORABLE_CLASS);
/** A listing's text. */
export const LISTING_TEXT_PATTERN = anyText(LISTING_TEXT_REFUSED);
/** A listing's text with a character that is not white space. */
export const NON_BLANK_LISTING_TEXT_PATTERN = nonBlank(LISTING_TEXT_REFUSED);

/**
 * A JSON Schema pattern that matches these words in any letter case, with outer spaces (what the
 * service accepts, since it trims and folds case): caseInsensitive(['true']) → ^\s*([Tt][Rr][Uu][Ee])\s*$.
 */
export function caseInsensitive(words: readonly string[]): string {
  return `^\\s*(${words.map(anyCase).join('|')})\\s*$`;
}

/** A regular expression source for this text in any letter case (other characters escaped). */
function anyCase(text: string): string {
  return [...text]
    .map((c) =>
      c.toLowerCase() !== c.toUpperCase()
        ? `[${c.toUpperCase()}${c.toLowerCase()}]`
        : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'),
    )
    .join('');
}

export const text = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .refine(isStorableText, STORABLE_MESSAGE)
    .transform((v) => v.trim() || null)
    .meta({ pattern: LISTING_TEXT_PATTERN })
    .nullable()
    .optional();

export const int = (min: number, max: number) =>
  z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`)
    .nullable()
    .optional();

// Fix (write tests): the 2-decimal check tolerates binary floating-point noise (0.1 + 0.2 is
// 0.30000000000000004), but the value itself used to go to the database unrounded. So a price of
// 1e-9 passed "> 0" and was stored as 0.00, and a noisy price differed from the stored numeric(12,2)
// on every resend: outcome "updated" and a new updatedAt each time. The value is now rounded to the
// cent before it is stored.
// Fix (fuzzer, seed 741894028): the tolerance was absolute (1e-6 of a cent), so a fuel consumption
// of -2.5e-323 or 5.000000001 passed as "2 decimals" and was stored as 0 or 5: a value below the
// documented minimum, or one with 9 decimals, cut without a word. The tolerance is now relative, a
// few units in the last place of value × 100: what arithmetic on a 2-decimal amount leaves behind,
// never a decimal a client wrote. And the bounds apply to the value as sent, as the document says.
const toCents = (v: number) => Math.round(v * 100) / 100;
const twoDecimals = (v: number) => {
  const cents = v * 100;
  return Math.abs(Math.round(cents) - cents) <= Math.abs(cents) * 4 * Number.EPSILON;
};

export const decimal = (min: number, max: number, exclusiveMin = false) =>
  z
    .number({ error: 'must be a number' })
    .refine((v) => (exclusiveMin ? v > min : v >= min) && v <= max, {
      message: `must be ${exclusiveMin ? 'greater than' : 'at least'} ${min} and at most ${max}`,
    })
    .refine(twoDecimals, messages.atMostTwoDecimals())
    .transform(toCents)
    // The bounds in the document, and the 2 decimals as multipleOf 0.01 (issue 40: a generated
    // client could not know it from words). multipleOf means a decimal multiple: a validator that
    // divides in binary floating point judges 19.99 wrong (1998.9999999999998 cents), hence the
    // description; Ajv's multipleOfPrecision, Python's Decimal judge it right.
    .meta({
      [exclusiveMin ? 'exclusiveMinimum' : 'minimum']: min,
      maximum: max,
      multipleOf: 0.01,
      description:
        'At most 2 decimals (multipleOf 0.01, meant in decimal: 19.99 qualifies, whatever binary floating point says).',
    })
    .nullable()
    .optional();

export const bool = z.boolean({ error: 'must be true or false' }).nullable().optional();

export function enumField(name: EnumName) {
  const allowed = ENUMS[name].values.join(', ');
  return z
    .string({ error: `must be a string, one of: ${allowed}` })
    .transform((raw, ctx) => {
      if (raw.trim() === '') return null;
      // A value sent exactly as it is needs no refusal check: no refused word is a value.
      if (isValue(name, raw)) return raw;
      const refusal = refusalOf(name, raw);
      if (refusal) {
        ctx.addIssue({
          code: 'custom',
          message: `"${raw.slice(0, 50)}" ${refusal}`,
          params: { code: 'ambiguous_value' },
        });
        return z.NEVER;
      }
      const value = matchEnum(name, raw);
      if (value === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: messages.notAllowed(raw, ENUMS[name].values),
        });
        return z.NEVER;
      }
      return value;
    })
    .meta({ pattern: enumPattern(name) })
    .nullable()
    .optional()
    .describe(`One of: ${allowed}. Case-insensitive; aliases: GET /reference/enums.`);
}

/**
 * What enumField accepts, as a JSON Schema pattern: each value (its underscores optional, or a
 * space or hyphen) and each alias, in any letter case, with outer spaces; empty clears the field.
 * (The service also forgives accents, which a pattern cannot say; the description does.)
 */
function enumPattern(name: EnumName): string {
  const spec = ENUMS[name] as { values: readonly string[]; aliases: Record<string, string> };
  const word = (key: string, separator: string) => key.split('_').map(anyCase).join(separator);
  const accepted = [
    ...spec.values.map((value) => word(value, '[\\s_-]*')),
    // An alias's words are matched with one "_", or a run of spaces and hyphens, between them
    // (enumKey: `sans plomb`, `sans-plomb`, `sans_plomb`; not `sans_ plomb`); its "/" as a "/",
    // "+" or "&" with or without spaces, or a spaced "en", "et" or "met" (`Benzine + LPG`).
    ...Object.keys(spec.aliases).map((alias) =>
      alias
        .split('/')
        .map((part) => word(part, '(?:_|[\\s-]+)'))
        .join(`(?:\\s*[/+&]\\s*|\\s+(?:${['en', 'et', 'met'].map(anyCase).join('|')})\\s+)`),
    ),
  ];
  return `^\\s*(${accepted.join('|')})?\\s*$`;
}

/**
 * An image URL as the document states it and the service checks it (one source): http or https,
 * a host, no control character (C0, DEL) anywhere: the URL parser would drop a tab or a line
 * break quietly, and the URL kept would not be the one sent. White space around it is trimmed.
 */
const URL_REFUSED = `\\u0001-\\u001f\\u007f${LISTING_TEXT_REFUSED}`;

/**
 * A URL rule's two forms from one source, `rule(rest)` writing the rule with `rest` as the
 * quantifier of its last character class. The document's: white space allowed around, the rest
 * lazy. The service's: checked after trimming, the rest greedy; the same verdict, in time linear
 * in the text. The document's form run as such backtracks through a run of spaces at every
 * character: 6 ms for a 2 kB image URL, half a second for 20 kB, on every image of a bulk (found
 * 2026-11-30).
 */
function urlPatterns(rule: (rest: string) => string): { document: string; trimmed: RegExp } {
  return { document: `^\\s*${rule('*?')}\\s*$`, trimmed: new RegExp(`^${rule('*')}$`, 'u') };
}

const HTTP_URL = urlPatterns(
  (rest) => `${anyCase('http')}[Ss]?://[^\\s/?#${URL_REFUSED}][^${URL_REFUSED}]${rest}`,
);
/** A URL's bound, in characters and in UTF-8 bytes: the image checks index the URL as sent. */
const URL_MAX = 2048;

export const httpUrl = z
  .string({ error: 'must be a URL string' })
  .trim()
  .max(URL_MAX, 'must be at most 2048 characters')
  .regex(HTTP_URL.trimmed, 'must be an http(s) URL without control characters')
  // PostgreSQL's index refuses a key past 2,704 bytes: a longer URL would fail its whole batch.
  .refine((v) => v.length > URL_MAX || Buffer.byteLength(v) <= URL_MAX, 'must be at most 2048 bytes in UTF-8')
  .refine(isStorableText, STORABLE_MESSAGE)
  .refine((v) => {
    try {
      const url = new URL(v);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL')
  .meta({ pattern: HTTP_URL.document, description: 'An http(s) URL, at most 2048 bytes in UTF-8.' });

export const image = z.union([
  httpUrl,
  z.strictObject({
    url: httpUrl,
    position: z.number().int().min(0).optional(),
    check: z
      .unknown()
      .optional()
      .describe('Read-only: accepted and ignored, so a listing read back can be sent back as it is.'),
  }),
]);

/** A feature's text: trimmed, 1 to max characters, by the text rule (its pattern in the document). */
const featureText = (max: number, error?: string) =>
  z
    .string(error ? { error } : undefined)
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine(isStorableText, STORABLE_MESSAGE)
    .meta({ pattern: NON_BLANK_LISTING_TEXT_PATTERN });

export const feature = z.union([
  featureText(200, 'must be a string or {category, name}').transform((name) => ({ category: 'other', name })),
  z.strictObject({ category: featureText(100), name: featureText(200) }),
]);

export const VIN_PATTERN = /^[A-HJ-NPR-Z0-9]{17}$/;

/** Days in a month of the (proleptic) Gregorian calendar. */
function daysIn(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

export function firstRegistration(today: () => Date) {
  return z
    .string({ error: 'must be a date string YYYY-MM or YYYY-MM-DD' })
    .trim()
    .transform((raw, ctx) => {
      const match = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(raw);
      const [year, month, day] = match ? [+match[1]!, +match[2]!, match[3] ? +match[3] : 1] : [0, 0, 0];
      // A day of the calendar by arithmetic: a Date parsed and printed back for each item cost a
      // tenth of a bulk's validation (bench/results/2026-11-30-bulk-input.txt).
      // Year 0000 is none: the calendar goes from 1 BC to AD 1, and PostgreSQL refuses it.
      if (!match || year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) {
        ctx.addIssue({ code: 'custom', message: 'must be a date YYYY-MM or YYYY-MM-DD' });
        return z.NEVER;
      }
      const iso = `${match[1]}-${match[2]}-${match[3] ?? '01'}`;
      const now = today();
      if (
        year * 10_000 + month * 100 + day >
        now.getUTCFullYear() * 10_000 + (now.getUTCMonth() + 1) * 100 + now.getUTCDate()
      ) {
        ctx.addIssue({ code: 'custom', message: 'must not be in the future' });
        return z.NEVER;
      }
      return iso;
    })
    .meta({
      pattern: '^\\s*\\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\\d|3[01]))?\\s*$',
      description:
        'YYYY-MM or YYYY-MM-DD (a month means its first day): a day of the calendar (not 2019-02-30), not in the future (neither of which a pattern can say).',
    })
    .nullable()
    .optional();
}

export function historyReport(hosts: readonly string[]) {
  // The document's pattern is the service's first check (one source, urlPatterns): an URL of
  // another host, or with a control character the URL parser would drop, is refused before it is
  // parsed.
  const pattern = urlPatterns(
    (rest) =>
      `(\\d{11}|${anyCase('https://')}(${hosts.map(anyCase).join('|')})([/?#][^${URL_REFUSED}]${rest})?)?`,
  );
  const refusal = `must be an https URL on ${hosts.join(' or ')}, or an 11-digit certificate number`;
  return z
    .string({ error: 'must be a string' })
    .trim()
    .max(URL_MAX, 'must be at most 2048 characters')
    .regex(pattern.trimmed, refusal)
    .transform((raw, ctx) => {
      if (raw === '') return null;
      if (/^\d{11}$/.test(raw)) return raw;
      let url: URL | undefined;
      try {
        url = new URL(raw);
      } catch {}
      if (url?.protocol !== 'https:' || !hosts.includes(url.hostname.toLowerCase())) {
        ctx.addIssue({ code: 'custom', message: refusal });
        return z.NEVER;
      }
      // Kept as the URL parser writes it, percent-encoded: the bound holds for what is kept, or
      // the listing read back could not be sent back (and every later PATCH would be refused).
      const kept = url.toString();
      if (kept.length > URL_MAX) {
        ctx.addIssue({ code: 'custom', message: 'must be at most 2048 characters once percent-encoded' });
        return z.NEVER;
      }
      return kept;
    })
    .meta({
      pattern: pattern.document,
      description: `An https URL on ${hosts.join(' or ')}, or an 11-digit certificate number.`,
    })
    .nullable()
    .optional();
}
