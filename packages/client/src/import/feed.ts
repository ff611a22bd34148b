import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { type ColumnMap, type CustomColumns, kindOf, mapColumns, rowToListing } from './columns.js';
import { CliError } from './errors.js';
import { readNumberColumn } from './number-columns.js';
import type { NumberFormat } from './numbers.js';

/** One listing of the feed, with where it came from (for the report). */
export interface FeedRow {
  /** CSV: the row number a spreadsheet shows (the header is row 1). JSON: the item's position, from 1. */
  row: number;
  listing: Record<string, unknown>;
  /** Why a cell was not read (an ambiguous number), by field: the report gives it as the reason. */
  notes?: Record<string, string>;
}

export interface Feed {
  format: 'csv' | 'json';
  rows: FeedRow[];
  /** SHA-256 of the file's bytes: a resume is only valid for the very same feed. */
  sha256: string;
  /** CSV only: how the file was read. */
  encoding?: Encoding;
  delimiter?: string;
  columns?: ColumnMap;
  /** CSV only: how number columns were read, where that needs saying. */
  numberNotes?: string[];
}

export type Encoding = 'utf-8' | 'iso-8859-15';

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
  const text = decode(bytes, format === 'json' ? 'utf-8' : options.encoding);
  if (format === 'json') return { format, rows: jsonRows(text.text), sha256 };
  const delimiter = options.delimiter ?? detectDelimiter(text.text);
  const { rows, columns } = csvRows(text.text, delimiter, options.columns);
  const numberNotes = readNumbers(rows, columns, options.numberFormat);
  return { format, rows, sha256, encoding: text.encoding, delimiter, columns, numberNotes };
}

/**
 * UTF-8 when the bytes are valid UTF-8 (a BOM is dropped), ISO-8859-15 otherwise: every byte
 * sequence is valid ISO-8859-15, and a Latin-1 file is almost never valid UTF-8 by accident
 * (an "é" alone, 0xE9, starts a 3-byte sequence that the next letters do not continue).
 */
export function decode(bytes: Buffer, forced?: Encoding): { text: string; encoding: Encoding } {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  if (forced) return { text: new TextDecoder(forced).decode(body), encoding: forced };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('iso-8859-15').decode(body), encoding: 'iso-8859-15' };
  }
}

/** `;` or `,` (or a tab): whichever the header line holds more of, outside quotes. */
export function detectDelimiter(text: string): string {
  const counts: Record<string, number> = { ';': 0, ',': 0, '\t': 0 };
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
): { rows: FeedRow[]; columns: ColumnMap } {
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
  return { rows, columns };
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
