import { LISTING_FIELD_TYPES } from '../listing-fields.js';
import { COLUMN_NAMES, foldName } from './column-names.js';
import { CliError } from './errors.js';
import { certain, readings } from './numbers.js';

/**
 * CSV columns → the listing write shape. A column is named after a field of the write shape
 * (docs/openapi.json, the PUT body), or in the Dutch or French a dealer system exports
 * (./column-names.ts), matched without regard to case, accents, spaces, `_` or `-`: `Fuel Type`,
 * `fuel_type`, `Brandstof` and `CARBURANT` all mean `fuelType`; `--columns` adds a system's own.
 * The kinds come from the document (src/listing-fields.ts is generated from it), so a new field
 * is importable without a change here.
 */
export type Kind = 'text' | 'integer' | 'decimal' | 'coordinate' | 'boolean' | 'list';

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

const normalize = foldName;
// The document lists a canonical name before its aliases: on a tie (`external_reference` and
// `externalReference` read the same) the canonical name wins.
const BY_NORMAL = new Map<string, string>();
for (const field of Object.keys(KNOWN)) {
  if (!BY_NORMAL.has(normalize(field))) BY_NORMAL.set(normalize(field), field);
}
/** The Dutch and French names, after the fields' own: they never take a field's name. */
const BY_NAME = new Map(BY_NORMAL);
for (const [field, names] of Object.entries(COLUMN_NAMES)) {
  for (const name of names) if (!BY_NAME.has(normalize(name))) BY_NAME.set(normalize(name), field);
}

/** The field a name of the write shape means (`fuel_type` → `fuelType`), for `--columns`. */
export const fieldNamed = (name: string): string | undefined => BY_NORMAL.get(normalize(name));

/** Kind of a known field. */
export const kindOf = (field: string): Kind | undefined => KNOWN[field];

/**
 * The known field a misspelt name most likely meant (at most two edits away), if any; else the one
 * a shortened name begins (`externalRef`).
 */
export function closestField(name: string): string | undefined {
  const wanted = normalize(name);
  let best: { field: string; distance: number } | undefined;
  for (const [normal, field] of BY_NORMAL) {
    const distance = editDistance(wanted, normal);
    if (distance <= 2 && (!best || distance < best.distance)) best = { field, distance };
  }
  if (best || wanted.length < 4) return best?.field;
  return [...BY_NORMAL].find(([normal]) => normal.startsWith(wanted))?.[1];
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
  /** The header row as the feed has it. */
  header: string[];
  /** Position in the row → field; `undefined` for an ignored column. */
  fields: (string | undefined)[];
  /** Header names the tool does not know (their cells are not sent). */
  ignored: string[];
}

/** `--columns`: the feed's own column names (folded) → field, or null for a column to ignore. */
export type CustomColumns = Map<string, string | null>;

export function mapColumns(header: string[], custom: CustomColumns = new Map()): ColumnMap {
  const fields = header.map((name) => {
    const own = custom.get(normalize(name));
    return own === null ? undefined : (own ?? BY_NAME.get(normalize(name)));
  });
  const seen = new Map<string, string>();
  header.forEach((name, i) => {
    const field = fields[i];
    if (!field) return;
    const earlier = seen.get(field);
    if (earlier !== undefined) {
      throw new CliError(
        `columns "${earlier}" and "${name}" are both ${field}: keep one of them, or ignore one with ` +
          `--columns FILE ({"${name}": null})`,
      );
    }
    seen.set(field, name);
  });
  // No title column is fine: titles are then made from brand, model and variant (./title.ts).
  if (!seen.has('externalReference')) {
    throw new CliError(
      `the feed has no externalReference column (header: ${header.join(', ') || 'empty'}); ` +
        'columns are named after the fields of a listing (or in Dutch or French: Referentie, ' +
        'Référence, Stocknummer…); name your own with --columns FILE, see docs/import.md',
    );
  }
  return { header, fields, ignored: header.filter((name, i) => !fields[i] && name !== '') };
}

/**
 * One CSV row as a listing: empty cells are left out, values converted where that is unambiguous.
 * Numbers stay text here: whether `39.990` is 39990 depends on the rest of its column
 * (./number-columns.ts reads them once every row is in).
 */
export function rowToListing(columns: ColumnMap, cells: string[]): Record<string, unknown> {
  const listing: Record<string, unknown> = {};
  cells.forEach((cell, i) => {
    const field = columns.fields[i];
    if (!field || cell === '') return;
    const kind = KNOWN[field]!;
    listing[field] = kind === 'integer' || kind === 'decimal' ? cell : convert(kind, cell, field);
  });
  return listing;
}

/**
 * A cell as the JSON value its field takes, read on its own. What cannot be read without guessing
 * stays a string: the service then refuses that field with a reason, and the report shows the row,
 * field and value (better than importing "12.450" as 12.45 euro).
 */
export function convert(kind: Kind, cell: string, field = ''): unknown {
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
    case 'decimal':
      // 120.000 km is not 120 km: a cell both formats read differently is not read (./numbers.ts).
      return certain(readings(cell, kind, field)) ?? cell;
    case 'coordinate': {
      // Degrees: a decimal point or comma, never thousands (4.350 is 4.35).
      const match = /^([+-]?\d+)(?:[.,](\d+))?$/.exec(cell);
      if (!match) return cell;
      return Number(match[2] === undefined ? match[1] : `${match[1]}.${match[2]}`);
    }
  }
}
