/**
 * Numbers as dealer systems write them: `12.500,00`, `17.990,-`, `€ 18.750`, `21 500`, `61.200 km`,
 * `19,950.50`. A cell is read in both conventions, dot for thousands (`1.234,56`) and comma for
 * thousands (`1,234.56`); when they agree (`19950`, `21 500`) or only one of them reads it
 * (`12.500,00`, `19950.50`) the value is certain. When both read it differently (`39.990`: 39990
 * or 39.99) the rest of the column decides, or `--number-format`; otherwise the cell is refused
 * with the reason, never read one way by guess.
 */

/** `comma`: 1.234,56 (the comma is the decimal separator); `dot`: 1,234.56. */
export type NumberFormat = 'comma' | 'dot';
export type NumberKind = 'integer' | 'decimal';

/** How each format is written, in messages and on the command line. */
export const FORMAT_NAME: Record<NumberFormat, string> = { comma: '1.234,56', dot: '1,234.56' };

export function numberFormatOption(value: string): NumberFormat | undefined {
  if (value === FORMAT_NAME.comma) return 'comma';
  if (value === FORMAT_NAME.dot) return 'dot';
  return undefined;
}

/**
 * Units a cell of a field may carry, before or after the number (lowercase, without spaces).
 * Only the field's own unit: `Vermogen` in hp (`150 pk`) must not be read as 150 kW.
 */
const UNITS: Record<string, string> = {
  price: '€|eur|euros?',
  mileage: 'km',
  powerKw: 'kw',
  co2Emission: 'g ?/ ?km',
  weight: 'kg',
  fuelConsumption: 'l ?/ ?100 ?km',
};

/** The cell's value in each format that reads it; `undefined` for a format that does not. */
export interface Readings {
  comma?: number;
  dot?: number;
}

/** Thin, narrow and no-break spaces are thousands separators too (what spreadsheets export). */
const SPACES = /[\s\u00a0\u2007\u202f]+/g;

/** Both readings of a cell, with its field's unit and a `,-` ("no cents") allowed. */
export function readings(cell: string, kind: NumberKind, field = ''): Readings {
  const body = stripUnit(cell.replace(SPACES, ' ').trim(), UNITS[field]);
  const out: Readings = {};
  for (const format of ['comma', 'dot'] as const) {
    const value = readAs(body, format);
    // An integer field cannot hold 61.2: of `61.200 km`, only 61200 is a mileage.
    if (value !== undefined && (kind === 'decimal' || Number.isInteger(value))) out[format] = value;
  }
  return out;
}

/** The reading when it is certain on its own: both formats agree, or only one reads the cell. */
export function certain(r: Readings): number | undefined {
  if (r.comma !== undefined && r.dot !== undefined) return r.comma === r.dot ? r.comma : undefined;
  return r.comma ?? r.dot;
}

/** Which format the cell proves: only one of them reads it (`12.500,00`, `1.234.567`, `19950.50`). */
export function proves(r: Readings): NumberFormat | undefined {
  if (r.comma !== undefined && r.dot === undefined) return 'comma';
  if (r.dot !== undefined && r.comma === undefined) return 'dot';
  return undefined;
}

function stripUnit(text: string, unit: string | undefined): string {
  if (!unit) return text;
  const match = new RegExp(`^(?:${unit}) ?(.+)$|^(.+?) ?(?:${unit})$`, 'i').exec(text);
  return match ? (match[1] ?? match[2]!) : text;
}

/**
 * The value of `text` in one format, or undefined. Thousands groups are of three digits after a
 * first group of one to three (not starting with 0), all with the same separator; the decimal
 * separator appears at most once, followed by digits or by `-` (`17.990,-`: no cents).
 */
function readAs(text: string, format: NumberFormat): number | undefined {
  const decimal = format === 'comma' ? ',' : '.';
  const thousands = format === 'comma' ? '[. ]' : '[, ]';
  const grouped = `[1-9]\\d{0,2}(${thousands})\\d{3}(?:\\3\\d{3})*`;
  const pattern = new RegExp(`^([+-]?)(\\d+|${grouped})(?:\\${decimal}(\\d+|-{1,2}))?$`);
  const match = pattern.exec(text);
  if (!match) return undefined;
  const [, sign, whole, , fraction] = match;
  const digits = whole!.replace(/\D/g, '');
  const cents = fraction === undefined || fraction.startsWith('-') ? '' : `.${fraction}`;
  return Number(`${sign}${digits}${cents}`);
}
