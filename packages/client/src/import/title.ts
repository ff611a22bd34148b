import { closestField, fieldNamed } from './columns.js';
import { CliError } from './errors.js';

/**
 * Titles made from other columns: `--title "{brand} {model} {variant}"`, and the same template by
 * default for a feed without a title column (most dealer systems export brand, model and variant
 * apart). A placeholder is a listing field (`{brand}`, `{year}`, `{powerKw}`) or a column of the
 * feed by its header (`{Uitvoering}`), compared as column names are (case, accents, spaces).
 */
export const DEFAULT_TITLE = '{brand} {model} {variant}';

export interface TitleTemplate {
  text: string;
  /** The placeholders in order: a field of the listing, or a header name (folded) of the feed. */
  parts: ({ literal: string } | { field: string } | { column: string })[];
}

export function parseTitleTemplate(
  text: string,
  header: readonly string[] = [],
  fold = (s: string) => s,
): TitleTemplate {
  const parts: TitleTemplate['parts'] = [];
  const pattern = /\{([^{}]*)\}/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) parts.push({ literal: text.slice(last, match.index) });
    const name = match[1]!.trim();
    const field = fieldNamed(name);
    const column = header.find((h) => fold(h) === fold(name));
    if (field) parts.push({ field });
    else if (column !== undefined) parts.push({ column: fold(column) });
    else {
      const guess = closestField(name);
      throw new CliError(
        `--title "${text}": {${name}} is neither a listing field nor a column of the feed` +
          (guess ? `; did you mean {${guess}}?` : ''),
      );
    }
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ literal: text.slice(last) });
  if (!parts.some((p) => !('literal' in p))) {
    throw new CliError(`--title "${text}" has no {field}: e.g. --title "${DEFAULT_TITLE}"`);
  }
  return { text, parts };
}

/**
 * The title of one row: the placeholders' cells as the feed writes them (`{year}` is `2021`), an
 * empty one left out with its surrounding spaces; undefined when every placeholder is empty.
 */
export function makeTitle(
  template: TitleTemplate,
  cellOf: (part: { field: string } | { column: string }) => string | undefined,
): string | undefined {
  let filled = 0;
  const text = template.parts
    .map((part) => {
      if ('literal' in part) return part.literal;
      const cell = cellOf(part)?.trim();
      if (cell) filled++;
      return cell ?? '';
    })
    .join('')
    .replace(/\s+/g, ' ')
    // A separator an empty placeholder left at an end ("Golf -").
    .replace(/^[\s,;:|/–-]+|[\s,;:|/–-]+$/g, '');
  return filled > 0 && text ? text : undefined;
}
