import type { z } from 'zod';
import type { Issue } from './errors.js';
import { unknownNameMessage } from './suggest.js';

/**
 * Unknown names are refused, never dropped: under PUT's replace semantics a misspelt `milage`
 * would clear `mileage`, and an ignored `?stauts=sold` would answer with active listings.
 * These helpers turn a Zod schema's view of an input into one issue per unknown name, each
 * naming the closest known one.
 */

type Kind = 'field' | 'parameter';
/** The parts of a Zod schema's definition that lead to its object shapes. */
interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
}
const CODE: Record<Kind, string> = { field: 'unknown_field', parameter: 'unknown_parameter' };
/**
 * Names of one object that get a "did you mean" (an edit distance against every known name);
 * the rest are named plainly. So an object of 1,000 unknown names costs 20 comparisons' worth,
 * not 1,000, and a body's work stays bounded by its size (docs/contract.md#bounded-work).
 */
export const SUGGEST_AT_MOST = 20;

/** The message for the `index`-th unknown name of an object: with a suggestion for the first few. */
function messageFor(kind: Kind, name: string, known: readonly string[], index: number): string {
  return index < SUGGEST_AT_MOST ? unknownNameMessage(kind, name, known) : unknownNameMessage(kind, name, []);
}

/** The property names an object schema declares, looking through optional, nullable and pipes. */
export function declaredKeys(schema: z.ZodType): string[] | undefined {
  const def = (schema as unknown as { def?: SchemaDef }).def;
  if (!def) return undefined;
  if (def.type === 'object') return Object.keys((schema as unknown as z.ZodObject).shape);
  if (def.type === 'lazy' && def.getter) return declaredKeys(def.getter());
  if (def.innerType) return declaredKeys(def.innerType);
  if (def.type === 'pipe' && def.in) return declaredKeys(def.in);
  return undefined;
}

/** One issue per name of `input` that `known` does not list. */
export function unknownKeyIssues(
  input: Record<string, unknown>,
  known: readonly string[],
  kind: Kind,
  prefix: readonly (string | number)[] = [],
): Issue[] {
  const names = new Set(known);
  return Object.keys(input)
    .filter((name) => !names.has(name))
    .map((name, index) => ({
      path: [...prefix, name].join('.'),
      message: messageFor(kind, name, known, index),
      code: CODE[kind],
    }));
}

/**
 * Zod's `unrecognized_keys` issue (from a strict object) says only which keys were extra; this
 * expands it to one issue per key with a suggestion drawn from the object's own declared names.
 * Other issues pass through unchanged.
 */
export function expandUnrecognized(
  issues: readonly z.core.$ZodIssue[],
  root: z.ZodType,
  kind: Kind,
): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return [issue];
    const known = declaredKeys(schemaAt(root, issue.path)) ?? [];
    return issue.keys.map(
      (key, index) =>
        ({
          code: 'custom',
          path: [...issue.path, key],
          message: messageFor(kind, key, known, index),
          params: { code: CODE[kind] },
          input: undefined,
        }) as z.core.$ZodIssue,
    );
  });
}

/** The sub-schema at a path of object keys and array indexes, as far as it can be followed. */
function schemaAt(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType {
  let current: z.ZodType = root;
  for (const segment of path) {
    const next = child(current, segment);
    if (!next) return current;
    current = next;
  }
  return current;
}

function child(schema: z.ZodType, segment: PropertyKey): z.ZodType | undefined {
  const def = (schema as unknown as { def?: SchemaDef }).def;
  if (!def) return undefined;
  if (def.type === 'object') return (schema as unknown as z.ZodObject).shape[String(segment)];
  if (def.type === 'array' && typeof segment === 'number') return def.element;
  if (def.type === 'lazy' && def.getter) return child(def.getter(), segment);
  if (def.innerType) return child(def.innerType, segment);
  if (def.type === 'pipe' && def.in) return child(def.in, segment);
  if (def.type === 'union' && def.options) {
    for (const option of def.options) {
      const found = child(option, segment);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Unknown names a merge patch sets to null. Applying the patch removes them, so the document it
 * leaves has nothing for the schema to refuse and `{"milage": null}` would answer "unchanged":
 * they are looked for in the patch itself, at every depth where the schema declares an object.
 * (Unknown names with a value stay in the document and are refused by its validation.)
 */
export function unknownNullIssues(
  patch: Record<string, unknown>,
  schema: z.ZodType,
  prefix: readonly string[] = [],
): Issue[] {
  const known = declaredKeys(schema);
  if (!known) return [];
  const names = new Set(known);
  const issues: Issue[] = [];
  for (const [name, value] of Object.entries(patch)) {
    if (!names.has(name)) {
      if (value === null) {
        issues.push({
          path: [...prefix, name].join('.'),
          message: messageFor('field', name, known, issues.length),
          code: CODE.field,
        });
      }
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const inner = child(schema, name);
      if (inner)
        issues.push(...unknownNullIssues(value as Record<string, unknown>, inner, [...prefix, name]));
    }
  }
  return issues;
}
