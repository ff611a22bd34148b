import { certain, FORMAT_NAME, type NumberFormat, type NumberKind, proves, readings } from './numbers.js';

/** One cell of a number column: its position among the feed's rows, its spreadsheet row, its text. */
export interface NumberCell {
  index: number;
  row: number;
  text: string;
}

export interface NumberColumn {
  /** The column's name in the feed's header (for messages). */
  name: string;
  field: string;
  kind: NumberKind;
  cells: NumberCell[];
}

export interface ColumnReading {
  /** Cells read as numbers, by index. */
  values: Map<number, number>;
  /** Cells refused, by index, with the reason the report gives (they are sent as text). */
  refused: Map<number, string>;
  /** What to say at the start of the run about this column, if anything. */
  note?: string;
}

const OPTION = `--number-format ${FORMAT_NAME.comma} or --number-format ${FORMAT_NAME.dot}`;

/**
 * A number column of a CSV feed. A cell that only one format reads (`12.500,00` only as 1.234,56,
 * `19950.50` only as 1,234.56) proves the format of the column, which then reads the cells that
 * alone could be either (`39.990`). A column proving both is refused wherever a separator is
 * read, since one of its values is read wrong either way; `forced` (--number-format) decides.
 * A cell neither format reads is left as it is: the service says it is not a number.
 */
export function readNumberColumn(column: NumberColumn, forced?: NumberFormat): ColumnReading {
  const values = new Map<number, number>();
  const refused = new Map<number, string>();
  const read = column.cells.map((cell) => ({ cell, r: readings(cell.text, column.kind, column.field) }));

  if (forced) {
    const other: NumberFormat = forced === 'comma' ? 'dot' : 'comma';
    for (const { cell, r } of read) {
      const value = r[forced];
      if (value !== undefined) values.set(cell.index, value);
      else if (r[other] !== undefined) {
        refused.set(cell.index, `is not a number written ${FORMAT_NAME[forced]} (--number-format)`);
      }
    }
    return { values, refused };
  }

  const proof: Partial<Record<NumberFormat, NumberCell>> = {};
  for (const { cell, r } of read) {
    const format = proves(r);
    if (format) proof[format] ??= cell;
  }
  const shown = (cell: NumberCell) => `row ${cell.row}: "${cell.text}"`;

  if (proof.comma && proof.dot) {
    const reason =
      `column "${column.name}" mixes ${FORMAT_NAME.comma} (${shown(proof.comma)}) and ` +
      `${FORMAT_NAME.dot} (${shown(proof.dot)}), so its separators cannot be read; say which with ${OPTION}`;
    for (const { cell, r } of read) {
      const same = r.comma !== undefined && r.comma === r.dot;
      if (same) values.set(cell.index, r.comma!);
      else if (r.comma !== undefined || r.dot !== undefined) refused.set(cell.index, reason);
    }
    return { values, refused, note: `${reason} (${refused.size} values refused)` };
  }

  const format = proof.comma ? 'comma' : proof.dot ? 'dot' : undefined;
  let decided = 0;
  for (const { cell, r } of read) {
    const alone = certain(r);
    if (alone !== undefined) values.set(cell.index, alone);
    else if (format && r[format] !== undefined) {
      values.set(cell.index, r[format]);
      decided++;
    } else if (r.comma !== undefined && r.dot !== undefined) {
      refused.set(
        cell.index,
        `could be ${r.comma} (${FORMAT_NAME.comma}) or ${r.dot} (${FORMAT_NAME.dot}), and no other value of ` +
          `column "${column.name}" shows which; say which with ${OPTION}`,
      );
    }
  }
  if (format && decided > 0) {
    const by = proof[format]!;
    return {
      values,
      refused,
      note: `column "${column.name}": numbers read as ${FORMAT_NAME[format]}, as ${shown(by)} shows`,
    };
  }
  if (refused.size > 0) {
    const rows = column.cells.filter((c) => refused.has(c.index)).map((c) => c.row);
    const list = rows.slice(0, 5).join(', ') + (rows.length > 5 ? ', …' : '');
    return {
      values,
      refused,
      note: `column "${column.name}": ${refused.size} ${refused.size === 1 ? 'value' : 'values'} could be read two ways (rows ${list}) and will be refused; say which with ${OPTION}`,
    };
  }
  return { values, refused };
}
