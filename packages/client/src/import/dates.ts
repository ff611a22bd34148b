/**
 * Dates as Belgian and Dutch dealer systems write them: `15/03/2021`, `15-03-2021`, `15.03.2021`,
 * a month alone for a first registration (`03/2021`, `03-2021`), and ISO (`2021-03-15`,
 * `2021-03`). Day first by default, never month first by guess (docs/import.md#the-feed): a feed
 * that writes `03/15/2021` says so with `--date-order mdy`. The service takes `YYYY-MM-DD` or
 * `YYYY-MM`.
 */
export type DateOrder = 'dmy' | 'mdy' | 'ymd';

export const DATE_ORDERS: readonly DateOrder[] = ['dmy', 'mdy', 'ymd'];

/** The fields a feed writes as dates. */
export const DATE_FIELDS = new Set(['firstRegistration']);

export type DateReading = { value: string } | { reason: string };

const pad = (n: number) => String(n).padStart(2, '0');

/** Days in a month (month 1–12) of a year. */
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * A date cell as `YYYY-MM-DD` or `YYYY-MM`, or the reason it cannot be read. A time after the date
 * (`15/03/2021 00:00`, as spreadsheets export) is dropped: a registration has a day, not an hour.
 */
export function readDate(cell: string, order: DateOrder = 'dmy'): DateReading {
  const text = cell.trim().replace(/[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/, '');
  const iso = /^(\d{4})-(\d{1,2})(?:-(\d{1,2}))?$/.exec(text);
  const parts = iso ? { year: iso[1]!, month: iso[2]!, day: iso[3] } : splitDate(text, order);
  if (!parts) {
    return {
      reason:
        `"${cell}" is not a date the importer reads: write it as dd/mm/yyyy, dd-mm-yyyy, mm/yyyy or ` +
        `yyyy-mm-dd${order === 'dmy' ? '' : ` (with --date-order ${order}: ${ORDER_SHOWN[order]})`}`,
    };
  }
  if (parts.year.length !== 4) {
    return {
      reason: `"${cell}" has a two-digit year: write the year in full (${cell.replace(/\d+$/, '20xx')})`,
    };
  }
  const year = Number(parts.year);
  const month = Number(parts.month);
  if (month < 1 || month > 12) {
    const hint =
      order === 'dmy' && parts.day !== undefined && Number(parts.day) <= 12
        ? '; if the feed writes the month first, say so with --date-order mdy'
        : '';
    return { reason: `"${cell}" has no month ${month} (read as ${ORDER_SHOWN[iso ? 'ymd' : order]})${hint}` };
  }
  if (parts.day === undefined) return { value: `${year}-${pad(month)}` };
  const day = Number(parts.day);
  if (day < 1 || day > daysIn(year, month)) {
    return {
      reason: `"${cell}" is not a date: ${year}-${pad(month)} has no day ${day} (read as ${ORDER_SHOWN[iso ? 'ymd' : order]})`,
    };
  }
  return { value: `${year}-${pad(month)}-${pad(day)}` };
}

const ORDER_SHOWN: Record<DateOrder, string> = {
  dmy: 'day/month/year',
  mdy: 'month/day/year',
  ymd: 'year/month/day',
};

/** `15/03/2021`, `15-03-2021`, `15.03.2021` in `order`, or a month alone: `03/2021`, `2021/03` (ymd). */
function splitDate(
  text: string,
  order: DateOrder,
): { year: string; month: string; day?: string } | undefined {
  const three = /^(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})$/.exec(text);
  if (three) {
    const [, a, , b, c] = three;
    // A four-digit year first is year/month/day whatever the order (2021/03/15).
    if (order === 'ymd' || a!.length === 4) return { year: a!, month: b!, day: c! };
    if (a!.length > 2) return undefined;
    return order === 'dmy' ? { year: c!, month: b!, day: a! } : { year: c!, month: a!, day: b! };
  }
  const two = /^(\d{1,4})[/.-](\d{1,4})$/.exec(text);
  if (two) {
    const [, a, b] = two;
    // A month alone is unambiguous whatever the order: the year has four digits.
    if (a!.length === 4 && b!.length <= 2) return { year: a!, month: b! };
    if (b!.length === 4 && a!.length <= 2) return { year: b!, month: a! };
  }
  return undefined;
}
