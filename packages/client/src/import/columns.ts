import { LISTING_FIELD_TYPES } from '../listing-fields.js';
import { CliError } from './errors.js';

/**
 * CSV columns → the listing write shape. A column is named after a field of the write shape
 * (docs/openapi.json, the PUT body), matched without regard to case, spaces, `_` or `-`:
 * `Fuel Type`, `fuel_type` and `FUELTYPE` all mean `fuelType`. The kinds come from the document
 * (src/listing-fields.ts is generated from it), so a new field is importable without a change here.
 */
type Kind = 'text' | 'integer' | 'decimal' | 'coordinate' | 'boolean' | 'list';

const KIND_OF_TYPE: Record<string, Kind | undefined> = {
  string: 'text',
  integer: 'integer',
  number: 'decimal',
  boolean: 'boolean',
  array: 'list',
  // An object (the `location` shorthand) has no one-cell form: its fields have columns of their own.
};

/** Degrees have any number of decimals: "4.350" is not a thousands separator there. */
const COORDINATES = new Set(['latitude', 'longitude']);

/** Every column name the tool knows: field → kind, aliases included (the service folds those). */
const KNOWN: Record<string, Kind> = Object.fromEntries(
  Object.entries(LISTING_FIELD_TYPES).flatMap(([field, type]) => {
    const kind = COORDINATES.has(field) ? 'coordinate' : KIND_OF_TYPE[type];
    return kind ? [[field, kind]] : [];
  }),
);

/** The field names a feed may carry (for `--map`'s check). */
export const knownFields = (): string[] => Object.keys(KNOWN);

const normalize = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
// The document lists a canonical name before its aliases: on a tie (`external_reference` and
// `externalReference` read the same) the canonical name wins.
const BY_NORMAL = new Map<string, string>();
for (const field of Object.keys(KNOWN)) {
  if (!BY_NORMAL.has(normalize(field))) BY_NORMAL.set(normalize(field), field);
}

/** The known field a misspelt name most likely meant (at most two edits away), if any. */
export function closestField(name: string): string | undefined {
  const wanted = normalize(name);
  let best: { field: string; distance: number } | undefined;
  for (const [normal, field] of BY_NORMAL) {
    const distance = editDistance(wanted, normal);
    if (distance <= 2 && (!best || distance < best.distance)) best = { field, distance };
  }
  return best?.field;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

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
