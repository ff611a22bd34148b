import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { foldName } from './column-names.js';
import { type ColumnMap, type CustomColumns, kindOf, mapColumns, rowToListing } from './columns.js';
import { DATE_FIELDS, type DateOrder, readDate } from './dates.js';
import { c1Reason, type Decoded, decode as decodeBytes, type Encoding } from './encoding.js';
import { CliError } from './errors.js';
import { isPriceOnRequest, PRICE_ON_REQUEST_NOTE } from './feed-values.js';
import { readNumberColumn } from './number-columns.js';
import type { NumberFormat } from './numbers.js';
import { DEFAULT_TITLE, makeTitle, parseTitleTemplate, type TitleTemplate } from './title.js';

/** One listing of the feed, with where it came from (for the report). */
export interface FeedRow {
  /** CSV: the row number a spreadsheet shows (the header is row 1). JSON: the item's position, from 1. */
  row: number;
  listing: Record<string, unknown>;
  /** Why a cell was not read (an ambiguous number, a date), by field: the report gives it as the reason. */
  notes?: Record<string, string>;
  /**
   * Fields the importer refuses itself, with the reason (text that still holds a C1 control
   * character after decoding): the row is not sent, and the report gives these.
   */
  refused?: Record<string, string>;
  /** What the importer decided for the row that the report tells although the row is taken. */
  told?: { code: string; field: string; value: string; reason: string };
}

export interface Feed {
  format: 'csv' | 'json';
  rows: FeedRow[];
  /** SHA-256 of the file's bytes: a resume is only valid for the very same feed. */
  sha256: string;
  /** CSV only: how the file was read, and why that encoding when it was detected and not UTF-8. */
  encoding?: Encoding;
  encodingWhy?: string;
  delimiter?: string;
  columns?: ColumnMap;
  /** What to say at the start of the run about how the feed was read (numbers, dates, titles…). */
  notes: string[];
}

export type { Encoding };

export interface FeedOptions {
  /** Overrides the detection. */
  encoding?: Encoding;
  delimiter?: string;
  /** Overrides the extension: `csv` or `json`. */
  format?: 'csv' | 'json';
  /** `--number-format`: how every number column is written. */
  numberFormat?: NumberFormat;
  /** `--columns`: the feed's own column names. */
  columns?: CustomColumns;
  /** `--date-order`: how dates write day, month and year (default dmy). */
  dateOrder?: DateOrder;
  /** `--title`: a template every row's title is made from. */
  title?: string;
  /** `--location`: the location of rows that name none. */
  location?: string;
}

export function readFeed(file: string, options: FeedOptions = {}): Feed {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read the feed ${file}: ${(error as Error).message}`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const format = options.format ?? (/\.json$/i.test(file) ? 'json' : 'csv');
  // JSON is UTF-8 (RFC 8259) unless --encoding names another: a Windows-1252 export exists.
  const text = decode(bytes, format === 'json' ? (options.encoding ?? 'utf-8') : options.encoding);
  const notes: string[] = [];
  let feed: Feed;
  if (format === 'json') {
    feed = { format, rows: jsonRows(text.text), sha256, notes };
    if (options.title) notes.push(...applyTitle(feed.rows, parseTitleTemplate(options.title), 'option'));
  } else {
    const delimiter = options.delimiter ?? detectDelimiter(text.text);
    const { rows, columns, cells } = csvRows(text.text, delimiter, options.columns);
    feed = {
      format,
      rows,
      sha256,
      encoding: text.encoding,
      ...(text.why ? { encodingWhy: text.why } : {}),
      delimiter,
      columns,
      notes,
    };
    notes.push(...readPriceOnRequest(rows, columns));
    notes.push(...readNumbers(rows, columns, options.numberFormat));
    notes.push(...readDates(rows, columns, options.dateOrder ?? 'dmy'));
    const hasTitle = columns.fields.includes('title');
    if (options.title || !hasTitle) {
      const fold = foldName;
      const template = parseTitleTemplate(options.title ?? DEFAULT_TITLE, columns.header, fold);
      const byColumn = (index: number) => (part: { field: string } | { column: string }) => {
        const at =
          'field' in part
            ? columns.fields.indexOf(part.field)
            : columns.header.findIndex((h) => fold(h) === part.column);
        return at < 0 ? undefined : cells[index]![at];
      };
      notes.push(...applyTitle(rows, template, options.title ? 'option' : 'default', byColumn, hasTitle));
    }
  }
  if (options.location) notes.push(...applyLocation(feed.rows, options.location));
  refuseControlCharacters(feed.rows, feed.format === 'csv' ? text.encoding : undefined);
  refuseReservedNames(feed.rows);
  return feed;
}

/** The decoding of the feed's bytes (./encoding.ts). */
export function decode(bytes: Uint8Array, forced?: Encoding): Decoded {
  return decodeBytes(bytes, forced);
}

/** `;` or `,` (or a tab, or `|`): whichever the header line holds most of, outside quotes. */
export function detectDelimiter(text: string): string {
  const counts: Record<string, number> = { ';': 0, ',': 0, '\t': 0, '|': 0 };
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && char in counts) counts[char]!++;
  }
  const [best] = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return best![1] > 0 ? best![0] : ',';
}

function csvRows(
  text: string,
  delimiter: string,
  custom: CustomColumns | undefined,
): { rows: FeedRow[]; columns: ColumnMap; cells: string[][] } {
  let records: string[][];
  try {
    records = parse(text, {
      delimiter,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    }) as string[][];
  } catch (error) {
    // csv-parse says where: "Invalid Opening Quote: a quote is found on field 3 at line 7 …"
    throw new CliError(`the feed is not valid CSV: ${(error as Error).message}`);
  }
  const [header, ...body] = records;
  if (!header) throw new CliError('the feed is empty: a CSV feed starts with a header row');
  const columns = mapColumns(header, custom);
  const rows = body.map((cells, i) => ({ row: i + 2, listing: rowToListing(columns, cells) }));
  return { rows, columns, cells: body };
}

/**
 * Reads the number columns in place, each as a whole (./number-columns.ts): a value read becomes a
 * number, a refused one stays text with its reason in the row's notes. Returns what to tell.
 */
function readNumbers(rows: FeedRow[], columns: ColumnMap, forced: NumberFormat | undefined): string[] {
  const notes: string[] = [];
  columns.fields.forEach((field, position) => {
    const kind = field ? kindOf(field) : undefined;
    if (!field || (kind !== 'integer' && kind !== 'decimal')) return;
    const cells = rows.flatMap((r, index) => {
      const text = r.listing[field];
      return typeof text === 'string' ? [{ index, row: r.row, text }] : [];
    });
    const name = columns.header[position]!;
    const result = readNumberColumn({ name, field, kind, cells }, forced);
    for (const [index, value] of result.values) rows[index]!.listing[field] = value;
    for (const [index, reason] of result.refused) {
      const row = rows[index]!;
      row.notes = { ...row.notes, [field]: reason };
    }
    if (result.note) notes.push(result.note);
  });
  return notes;
}

/** Rows' spreadsheet numbers, at most five and "…" (for the notes). */
function rowList(rows: readonly number[]): string {
  return rows.slice(0, 5).join(', ') + (rows.length > 5 ? `, … (${rows.length} rows)` : '');
}

/** The header name of a field's column (for the notes). */
const columnOf = (columns: ColumnMap, field: string) =>
  columns.header[columns.fields.indexOf(field)] ?? field;

/**
 * "Prijs op aanvraag", "Prix sur demande", "POA": the car has no public price. It is imported as a
 * draft (a listing for sale needs a price) with no price, and the report says so for each row; a
 * row with a status of its own keeps it (the service then says whether it needs a price).
 */
function readPriceOnRequest(rows: FeedRow[], columns: ColumnMap): string[] {
  if (!columns.fields.includes('price')) return [];
  const found: number[] = [];
  for (const r of rows) {
    const cell = r.listing.price;
    if (typeof cell !== 'string' || !isPriceOnRequest(cell)) continue;
    delete r.listing.price;
    found.push(r.row);
    if (r.listing.status === undefined) {
      r.listing.status = 'draft';
      r.told = { code: 'PRICE_ON_REQUEST', field: 'price', value: cell, reason: PRICE_ON_REQUEST_NOTE };
    }
  }
  if (found.length === 0) return [];
  return [
    `column "${columnOf(columns, 'price')}": ${found.length === 1 ? '1 row says' : `${found.length} rows say`} ` +
      `price on request (row ${rowList(found)}): imported as ${found.length === 1 ? 'a draft' : 'drafts'} without a price, named in the report`,
  ];
}

/** Date columns (firstRegistration) as the service takes them, day first unless --date-order says. */
function readDates(rows: FeedRow[], columns: ColumnMap, order: DateOrder): string[] {
  const notes: string[] = [];
  for (const field of DATE_FIELDS) {
    if (!columns.fields.includes(field)) continue;
    const refused: number[] = [];
    for (const r of rows) {
      const cell = r.listing[field];
      if (typeof cell !== 'string') continue;
      const date = readDate(cell, order);
      if ('value' in date) r.listing[field] = date.value;
      else {
        r.notes = { ...r.notes, [field]: date.reason };
        refused.push(r.row);
      }
    }
    if (refused.length > 0) {
      notes.push(
        `column "${columnOf(columns, field)}": ${refused.length} ${refused.length === 1 ? 'date' : 'dates'} ` +
          `could not be read (row ${rowList(refused)}) and will be refused; dates are read ` +
          `${order === 'dmy' ? 'day first (dd/mm/yyyy, dd-mm-yyyy, mm/yyyy, yyyy-mm-dd)' : `as --date-order ${order}`}`,
      );
    }
  }
  return notes;
}

/**
 * Titles from a template: --title for every row, or the default (brand, model, variant) when the
 * feed has no title column. A row whose placeholders are all empty gets none (the service then
 * says a title is required).
 */
function applyTitle(
  rows: FeedRow[],
  template: TitleTemplate,
  why: 'option' | 'default',
  cellOf?: (index: number) => (part: { field: string } | { column: string }) => string | undefined,
  hasTitleColumn = false,
): string[] {
  let made = 0;
  rows.forEach((r, index) => {
    if (!r.listing || typeof r.listing !== 'object') return;
    const read =
      cellOf?.(index) ??
      ((part: { field: string } | { column: string }) => {
        const value = 'field' in part ? r.listing[part.field] : undefined;
        return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
      });
    const title = makeTitle(template, read);
    if (title === undefined) delete r.listing.title;
    else {
      r.listing.title = title;
      made++;
    }
  });
  const empty = rows.length - made;
  const rest =
    empty > 0 ? `; ${empty} ${empty === 1 ? 'row has' : 'rows have'} none of its fields, so no title` : '';
  return [
    why === 'option'
      ? `titles made from --title "${template.text}"${hasTitleColumn ? ' (the title column is not used)' : ''}${rest}`
      : `the feed has no title column: titles made from "${template.text}" (--title TEMPLATE says otherwise)${rest}`,
  ];
}

/** --location CODE: the location of every row that names none (a row's own column wins). */
function applyLocation(rows: FeedRow[], code: string): string[] {
  let given = 0;
  for (const r of rows) {
    if (!r.listing || typeof r.listing !== 'object') continue;
    const own = r.listing.dealerLocationCode ?? r.listing.dealerProfileId;
    if (own !== undefined && own !== null && own !== '') continue;
    r.listing.dealerLocationCode = code;
    given++;
  }
  const own = rows.length - given;
  return [
    `--location ${code}: ${given} ${given === 1 ? 'row' : 'rows'} without a location of ${given === 1 ? 'its' : 'their'} own go to ${code}` +
      (own > 0 ? `; ${own} name their own` : ''),
  ];
}

/**
 * Text still holding a C1 control character after decoding (U+0080–U+009F) was read in the wrong
 * encoding (`Škoda` from Windows-1252 read as ISO-8859-15 holds U+008A): the row is not sent, and
 * the report says which encoding was used and how to name the right one.
 */
function refuseControlCharacters(rows: FeedRow[], encoding: Encoding | undefined): void {
  for (const r of rows) {
    if (!r.listing || typeof r.listing !== 'object') continue;
    for (const [field, value] of Object.entries(r.listing)) {
      const texts = Array.isArray(value) ? value : [value];
      for (const text of texts) {
        const reason = typeof text === 'string' ? c1Reason(text, encoding) : undefined;
        if (reason) {
          r.refused = { ...r.refused, [field]: reason };
          break;
        }
      }
    }
  }
}

/**
 * A name JavaScript reserves (`__proto__`, or `constructor` holding `prototype`) anywhere in a
 * JSON item: the service refuses the whole request that carries one (400 INVALID_BODY), which
 * would stop the import at that batch on every run. The row is not sent; the report names where.
 */
function refuseReservedNames(rows: FeedRow[]): void {
  const find = (value: unknown, path: string): string | undefined => {
    if (value === null || typeof value !== 'object') return undefined;
    const at = (key: string) => (path ? `${path}.${key}` : key);
    if (!Array.isArray(value)) {
      if (Object.hasOwn(value, '__proto__')) return at('__proto__');
      const held = Object.hasOwn(value, 'constructor')
        ? (value as { constructor: unknown }).constructor
        : null;
      if (held !== null && typeof held === 'object' && Object.hasOwn(held, 'prototype'))
        return at('constructor');
    }
    for (const [key, inner] of Object.entries(value)) {
      const found = find(inner, at(key));
      if (found) return found;
    }
    return undefined;
  };
  for (const r of rows) {
    const where = find(r.listing, '');
    if (where) {
      r.refused = {
        ...r.refused,
        [where]: 'a name JavaScript reserves: the service cannot keep it as sent; rename or remove it',
      };
    }
  }
}

/** An array of listings, or an object holding it under `items`, `listings` or `data`. */
function jsonRows(text: string): FeedRow[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`the feed is not valid JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(value)
    ? value
    : value && typeof value === 'object'
      ? ['items', 'listings', 'data']
          .map((key) => (value as Record<string, unknown>)[key])
          .find((candidate) => Array.isArray(candidate))
      : undefined;
  if (!Array.isArray(list)) {
    throw new CliError('a JSON feed is an array of listings, or an object with the array under "items"');
  }
  // A non-object item is sent as it is: the service's answer says what is wrong, and the report
  // gets a row for it.
  return list.map((item, i) => ({ row: i + 1, listing: item as Record<string, unknown> }));
}
