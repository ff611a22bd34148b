import { z } from 'zod';
import { CURSOR_MAX_LENGTH, CURSOR_PATTERN } from '../../domain/cursor.js';
import { caseInsensitive, NON_BLANK_TEXT_PATTERN, TEXT_PATTERN } from '../../domain/listings/field-types.js';
import { messages } from '../../domain/messages.js';
import { isStorableText, STORABLE_MESSAGE } from '../../domain/text.js';

/** Query-string value types. Every query value arrives as a string; these parse it strictly. */

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * GET /listings/{id} takes the service's id. A partner that puts its own reference there (the
 * path it writes to) is told how to read by reference instead (docs/contract.md#one-listing).
 */
export const listingIdParam = z
  .string()
  .regex(UUID_PATTERN, {
    error: (issue) =>
      `must be the listing's id (a UUID the service assigned, data.id). To read a listing by your own reference, use GET /listings?externalReference=${encodeURIComponent(String(issue.input))}&status=all`,
  })
  // Kept as received (not lower-cased): the 404 looks for a reference equal to this text, and
  // references compare case-sensitively. The handler lower-cases it to read by id.
  .meta({ 'x-query-type': { type: 'string', format: 'uuid' } });

export const uuidParam = z
  .string()
  .regex(UUID_PATTERN, 'must be a UUID such as 3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c')
  .transform((v) => v.toLowerCase())
  .meta({ 'x-query-type': { type: 'string', format: 'uuid' } });

/**
 * Any positive integer, however many digits (docs/contract.md#pages): what it means is the caller's
 * business (a huge pageSize is clamped, a huge page is past the end). Values beyond 2^53 - 1 are
 * read as 2^53 - 1, the largest a JSON number carries exactly; either way the answer is the same.
 */
export const positiveIntParam = z
  .string()
  .regex(/^\s*\d+\s*$/, messages.positiveInteger())
  .transform((v) => Math.min(Number(v.trim()), Number.MAX_SAFE_INTEGER))
  .refine((v) => v >= 1, messages.positiveInteger())
  .meta({ 'x-query-type': { type: 'integer', minimum: 1 } });

/**
 * Free text in a query (codes, search words): U+0000 and unpaired surrogates are refused here,
 * as in bodies, since PostgreSQL cannot compare against them (they were a 500).
 */
export const textParam = (max: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine(isStorableText, STORABLE_MESSAGE)
    // In the document too: not only spaces, and the text rule (src/domain/listings/field-types.ts).
    .meta({ pattern: NON_BLANK_TEXT_PATTERN });

/** Free text that may be empty (a search of nothing is no filter): the text rule only. */
export const optionalTextParam = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine(isStorableText, STORABLE_MESSAGE)
    .meta({ pattern: TEXT_PATTERN });

/**
 * A cursor (pagination.nextCursor, a delivery's cursor): its form in the document, from the one
 * statement of it (src/domain/cursor.ts). Whether this service issued it is the decoder's check.
 */
export const cursorParam = z
  .string()
  .max(CURSOR_MAX_LENGTH, `must be at most ${CURSOR_MAX_LENGTH} characters`)
  .regex(CURSOR_PATTERN, 'is malformed; pass nextCursor exactly as received');

export const booleanParam = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .refine((v) => ['true', 'false', '1', '0'].includes(v), 'must be true, false, 1 or 0')
  .transform((v) => v === 'true' || v === '1')
  .meta({
    // A boolean to generated clients (they send true/false); the words any case, and 1/0, work too.
    'x-query-type': {
      anyOf: [{ type: 'boolean' }, { type: 'string', pattern: caseInsensitive(['true', 'false', '1', '0']) }],
    },
    description: 'true or false (1 and 0 work too; any letter case).',
  });

const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The forms dateTimeParam reads, for the document (issue 40: a fuzzer sent month 13 and hour 25,
 * which the looser pattern allowed): years 0001 to 9999, months 01 to 12, days 01 to 31, hours 00
 * to 23 (24:00, the end of a day, too), minutes and seconds 00 to 59, offsets up to ±23:59. What a
 * pattern cannot say is in the parameters' descriptions: the day must exist (not 2021-02-30) and
 * the instant, offset applied, must lie within the years 1 to 9999.
 */
const DATE_TIME_PATTERN = [
  '^\\s*',
  '(\\d{3}[1-9]|\\d{2}[1-9]\\d|\\d[1-9]\\d{2}|[1-9]\\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])',
  '([Tt ](([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?|24:00(:00(\\.0{1,9})?)?)',
  '([Zz]|[+ -]([01]\\d|2[0-3]):?[0-5]\\d)?)?',
  '\\s*$',
].join('');

/** What the document says of a date-time beyond its pattern. */
export const DATE_TIME_WORDS =
  'The day must exist (not 2021-02-30), and the instant, its offset applied, lie within the years 1 to 9999.';

/** Whether year-month-day is a day of the calendar (Date would roll 2021-02-30 over to March 2nd). */
function isCalendarDay(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

/**
 * An ISO 8601 date-time. No zone means UTC; a date alone means its midnight UTC. A "+" in an
 * offset that arrived unencoded in the URL has become a space: it is read as the "+" it was.
 * Impossible days and instants outside the years 1 to 9999 are refused, not rolled over.
 */
export const dateTimeParam = z
  .string()
  .transform((raw, ctx) => {
    // An unencoded + in a query string arrives as a space: `10:00 02:00` is `10:00+02:00`. Only
    // after a time, though: in `2026-11-26 02:00` the space separates the date from the time
    // (as SQL writes it), and a date-time without an offset is UTC, as the document's pattern says.
    const value = raw.trim().replace(/(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}:?\d{2})$/, '$1+$2');
    const match = DATE_TIME.exec(value);
    const parsed =
      match && isCalendarDay(match[1]!)
        ? new Date(match[2] ? `${match[1]}T${match[2]}${match[3] ?? 'Z'}` : `${match[1]}T00:00:00Z`)
        : undefined;
    const year = parsed?.getUTCFullYear() ?? Number.NaN;
    if (!parsed || Number.isNaN(parsed.getTime()) || year < 1 || year > 9999) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z' });
      return z.NEVER;
    }
    return parsed;
  })
  // No examples in the document: Swagger UI would prefill the filter in "Try it out", and a first
  // request would quietly return only recent listings. The description shows the forms instead.
  .meta({
    'x-query-type': {
      type: 'string',
      // The forms DATE_TIME reads (an impossible day such as 2021-02-30 is refused too).
      pattern: DATE_TIME_PATTERN,
    },
  });

/** A value given under several names: the canonical one wins, else the first alias present. */
export function pick<T>(...values: (T | undefined)[]): T | undefined {
  return values.find((v) => v !== undefined);
}
