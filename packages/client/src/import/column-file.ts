import { readFileSync } from 'node:fs';
import { foldName } from './column-names.js';
import { type CustomColumns, closestField, fieldNamed } from './columns.js';
import { readUtf8Text } from './encoding.js';
import { CliError } from './errors.js';

/**
 * `--columns FILE`: a system's own column names → listing fields, e.g.
 * `{"Stock nr": "externalReference", "Pk": null}` (null: ignore that column, even when its name is
 * one the tool knows). Names match the header folded like every column name (case, accents,
 * spaces); a field the listing does not have stops the run, naming the field it resembles.
 */
export function readColumnsFile(file: string): CustomColumns {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readUtf8Text(readFileSync(file)));
  } catch (error) {
    throw new CliError(`--columns ${file}: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(
      `--columns ${file}: expected a JSON object of your column names to fields, e.g. {"Stock nr": "externalReference"}`,
    );
  }
  const columns: CustomColumns = new Map();
  for (const [name, target] of Object.entries(parsed)) {
    if (target === null) {
      columns.set(foldName(name), null);
      continue;
    }
    const field = typeof target === 'string' ? fieldNamed(target) : undefined;
    if (!field) {
      const guess = typeof target === 'string' ? closestField(target) : undefined;
      throw new CliError(
        `--columns ${file}: column "${name}" is mapped to ${JSON.stringify(target)}, which is not a listing field` +
          (guess ? `; did you mean "${guess}"?` : '; the fields are those of ListingWrite (docs/import.md)'),
      );
    }
    columns.set(foldName(name), field);
  }
  return columns;
}
