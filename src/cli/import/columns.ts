import { LISTING_FIELDS } from '../../domain/listing-fields.js';
import { CliError } from '../output.js';

/**
 * CSV columns → the listing write shape. A column is named after a field of the write shape
 * (docs/openapi.json, ListingWrite), matched without regard to case, spaces, `_` or `-`:
 * `Fuel Type`, `fuel_type` and `FUELTYPE` all mean `fuelType`. The kinds come from the same field
 * table the service stores listings with, so a new field is importable without a change here.
 */
type Kind = 'text' | 'integer' | 'decimal' | 'coordinate' | 'boolean' | 'list';

const KIND_OF_STORED: Record<string, Kind> = {
  text: 'text',
  date: 'text',
  int: 'integer',
  numeric: 'decimal',
  float8: 'coordinate',
  bool: 'boolean',
  'text[]': 'list',
  jsonb: 'list',
};

/** Every column name the tool knows: field → kind, aliases included (the service folds those). */
const KNOWN: Record<string, Kind> = {
  externalReference: 'text',
  dealerLocationCode: 'text',
  dealerProfileId: 'text',
  status: 'text',
  ...Object.fromEntries(LISTING_FIELDS.map(([field, , stored]) => [field, KIND_OF_STORED[stored]!])),
  historyReport: 'text',
  historyReportNumber: 'text',
};

/** The field names a feed may carry (for `--map`'s check). */
export const knownFields = (): string[] => Object.keys(KNOWN);

const normalize = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
const BY_NORMAL = new Map(Object.keys(KNOWN).map((field) => [normalize(field), field]));

export interface ColumnMap {
  /** Position in the row → field; `undefined` for an ignored column. */
  fields: (string | undefined)[];
  /** Header names the tool does not know (their cells are not sent). */
  ignored: string[];
}

export function mapColumns(header: string[]): ColumnMap {
  const fields = header.map((name) => BY_NORMAL.get(normalize(name)));
  const seen = new Map<string, string>();
  header.forEach((name, i) => {
    const field = fields[i];
    if (!field) return;
    const earlier = seen.get(field);
    if (earlier !== undefined) {
      throw new CliError(`columns "${earlier}" and "${name}" are both ${field}: keep one of them`);
    }
    seen.set(field, name);
  });
  for (const required of ['externalReference', 'title']) {
    if (!seen.has(required)) {
      throw new CliError(
        `the feed has no ${required} column (header: ${header.join(', ') || 'empty'}); ` +
          'columns are named after the fields of a listing, see docs/import.md',
      );
    }
  }
  return { fields, ignored: header.filter((name, i) => !fields[i] && name !== '') };
}

/** One CSV row as a listing: empty cells are left out, values converted where that is unambiguous. */
export function rowToListing(columns: ColumnMap, cells: string[]): Record<string, unknown> {
  const listing: Record<string, unknown> = {};
  cells.forEach((cell, i) => {
    const field = columns.fields[i];
    if (!field || cell === '') return;
    listing[field] = convert(KNOWN[field]!, cell);
  });
  return listing;
}

/**
 * A cell as the JSON value its field takes. What cannot be read without guessing stays a string:
 * the service then refuses that field with a reason, and the report shows the row, field and value
 * (better than importing "12.450" as 12.45 euro).
 */
export function convert(kind: Kind, cell: string): unknown {
  switch (kind) {
    case 'text':
      return cell;
    case 'list':
      return cell
        .split('|')
        .map((item) => item.trim())
        .filter(Boolean);
    case 'boolean': {
      const value = cell.toLowerCase();
      if (['true', 'yes', 'y', '1', 'ja', 'oui', 'x'].includes(value)) return true;
      if (['false', 'no', 'n', '0', 'nee', 'non'].includes(value)) return false;
      return cell;
    }
    case 'integer':
      // Digits only: 120.000 km is not 120 km, so a thousands separator is not read as a decimal.
      return /^[+-]?\d+$/.test(cell) ? Number(cell) : cell;
    case 'decimal':
    case 'coordinate': {
      // 19950, 19950.5, 19950,50 (a decimal comma). In a price, three digits after the separator
      // are most likely a thousands separator (12.450): not guessed. Coordinates have any number.
      const match = /^([+-]?\d+)(?:[.,](\d+))?$/.exec(cell);
      if (!match || (kind === 'decimal' && match[2]?.length === 3)) return cell;
      return Number(match[2] === undefined ? match[1] : `${match[1]}.${match[2]}`);
    }
  }
}
