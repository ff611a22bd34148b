import fc from 'fast-check';
import { fits, resolve, type Schema } from './document.js';

/**
 * JSON Schema → fast-check, for the subset docs/openapi.json uses: $ref, anyOf/oneOf, type (one or
 * several), enum, const, string (minLength, maxLength, pattern, format uuid), integer and number
 * (minimum, maximum), boolean, null, array (items, minItems, maxItems) and object (properties,
 * required, additionalProperties).
 *
 * `valid` draws values the schema accepts; `invalid` draws values it refuses (each one confirmed
 * with Ajv, so "invalid" means invalid by the document). Both take overrides by field path
 * ("year", "location.city", "images[]") for rules the document states only in prose or
 * docs/contract.md#validation states on top (bounds, date formats, URL hosts): those come from the caller.
 */

export interface Overrides {
  /** Values valid by the service's documented rules, replacing the schema's own for this path. */
  valid?: (path: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;
  /** Extra invalid values for this path (invalid by the documented rules, not only the schema). */
  invalid?: (path: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;
  /** Fields never to mutate (ignored by the service, e.g. the body's reference on a PUT). */
  keep?: (path: string) => boolean;
}

/**
 * Code points a text field must take as they are: anything but U+0000 and the C1 controls
 * (U+0080 to U+009F, refused in a listing's text: docs/contract.md#text); surrogates only paired.
 */
export const textChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  {
    weight: 3,
    arbitrary: fc
      .string({ unit: 'binary', minLength: 1, maxLength: 1 })
      .filter((c) => c !== '\u0000' && !/[\u0080-\u009f]/.test(c)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('\t', '\n', '\u0001', '\u007f', '\u00a0', '\u2028', '\ufeff', '😀', '"', '\\'),
  },
);

/** Strings of min to max code points (JSON Schema counts code points), the maximum itself often. */
export function textOf(
  min: number,
  max: number,
  unit: fc.Arbitrary<string> = textChar,
): fc.Arbitrary<string> {
  const short = fc.string({ unit, minLength: min, maxLength: Math.max(min, Math.min(max, 24)) });
  if (max <= 24) return short;
  return fc.oneof(
    { weight: 5, arbitrary: short },
    { weight: 1, arbitrary: fc.string({ unit, minLength: 1, maxLength: 6 }).map((s) => fill(s, max)) },
  );
}

/** Repeats a seed to exactly n code points. */
export function fill(seed: string, n: number): string {
  const points = [...seed];
  return Array.from({ length: n }, (_, i) => points[i % points.length]).join('');
}

export const codePoints = (s: string) => [...s].length;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function types(schema: Schema): string[] | undefined {
  if (schema.type === undefined) return undefined;
  return [schema.type].flat() as string[];
}

/** Values the schema accepts. */
export function valid(schema: Schema, overrides: Overrides = {}, at = ''): fc.Arbitrary<unknown> {
  const node = resolve(schema);
  const override = overrides.valid?.(at, node);
  if (override) return override;
  const branches = (node.anyOf ?? node.oneOf) as Schema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => valid(b, overrides, at)));
  if (node.const !== undefined) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as unknown[]));
  const kinds = types(node);
  if (!kinds) return keptJson(2);
  return fc.oneof(...kinds.map((kind) => validOfType(kind, node, overrides, at)));
}

function validOfType(kind: string, node: Schema, overrides: Overrides, at: string): fc.Arbitrary<unknown> {
  switch (kind) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: Math.max(node.minimum ?? -MAX_SAFE, -MAX_SAFE),
        max: Math.min(node.maximum ?? MAX_SAFE, MAX_SAFE),
      });
    case 'number': {
      const min = node.minimum ?? node.exclusiveMinimum ?? -Number.MAX_VALUE;
      const max = node.maximum ?? node.exclusiveMaximum ?? Number.MAX_VALUE;
      if (node.multipleOf !== undefined) {
        // Whole multiples, within the bounds (19.99 as 1999 × 0.01, rounded to its decimals).
        const step = node.multipleOf as number;
        const decimals = Math.max(0, -Math.floor(Math.log10(step)));
        const lo = Math.max(Math.ceil(min / step), -MAX_SAFE);
        const hi = Math.min(Math.floor(max / step), MAX_SAFE);
        return fc
          .integer({ min: lo, max: hi })
          .map((n) => Number((n * step).toFixed(decimals)))
          .filter((n) => fits(node, n));
      }
      return fc.oneof(
        fc.integer({ min: Math.ceil(Math.max(min, -MAX_SAFE)), max: Math.floor(Math.min(max, MAX_SAFE)) }),
        fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((n) => n + 0),
      );
    }
    case 'string':
      if (node.format === 'uuid') return fc.uuid({ version: [1, 2, 3, 4, 5, 7] });
      if (typeof node.pattern === 'string') return fc.stringMatching(new RegExp(node.pattern));
      return textOf(node.minLength ?? 0, node.maxLength ?? 200);
    case 'array': {
      const max = Math.min(node.maxItems ?? 10, 10);
      const items = node.items ? valid(node.items, overrides, `${at}[]`) : keptJson(1);
      return fc.array(items, { minLength: node.minItems ?? 0, maxLength: Math.max(max, node.minItems ?? 0) });
    }
    case 'object': {
      const properties = (node.properties ?? {}) as Record<string, Schema>;
      const required = (node.required ?? []) as string[];
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([key, s]) => [key, valid(s, overrides, join(at, key))]),
        ),
        { requiredKeys: required },
      );
      if (node.additionalProperties === false) return record;
      // Unknown fields are allowed (and ignored): send some.
      // Never a name JavaScript reserves, at any depth: the body is then refused whole (400
      // INVALID_BODY, src/http/json-body.ts), which is no valid case.
      const extra = fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in properties)),
        keptJson(2),
        { maxKeys: 2 },
      );
      return fc
        .tuple(record, fc.option(extra, { freq: 4, nil: undefined }))
        .map(([r, x]) => ({ ...x, ...r }));
    }
    default:
      throw new Error(`schema-arbitrary: type ${kind} is not supported`);
  }
}

/**
 * Any JSON the service keeps as sent: never a name JavaScript reserves (`__proto__`, a constructor's
 * `prototype`), which makes the body refused whole (400 INVALID_BODY, src/http/json-body.ts).
 */
function keptJson(maxDepth: number): fc.Arbitrary<fc.JsonValue> {
  return fc.jsonValue({ maxDepth }).filter((v) => !/"(__proto__|prototype)":/.test(JSON.stringify(v)));
}

export const join = (at: string, key: string) => (at ? `${at}.${key}` : key);

const SAMPLES: unknown[] = [null, true, false, 0, -1, 1.5, 1e21, '', 'x', '12', [], [1], {}, { a: 1 }];

/** Values the schema refuses: wrong types, out of range, too long or short, unknown enum values. */
export function invalid(schema: Schema, overrides: Overrides = {}, at = ''): fc.Arbitrary<unknown> {
  const node = resolve(schema);
  const scalar: fc.Arbitrary<unknown>[] = [fc.constantFrom(...SAMPLES), fc.jsonValue({ maxDepth: 2 })];
  const structural: fc.Arbitrary<unknown>[] = [];
  const branches = ((node.anyOf ?? node.oneOf) as Schema[] | undefined) ?? [node];
  for (const branch of branches) invalidOfBranch(resolve(branch), overrides, at, scalar, structural);
  // A drawn scalar may fit after all (a junk string that is a UUID): Ajv has the last word. A
  // structural mutation (a field made invalid, an item too many) is invalid by construction, also
  // where only the service's documented rules make it so, which Ajv cannot know.
  const all = [fc.oneof(...scalar).filter((v) => !fits(node, v) && !lenientMatch(node, v)), ...structural];
  const extra = overrides.invalid?.(at, node);
  if (extra) all.push(extra);
  return fc.oneof(...all);
}

/** The service matches enumerations case-insensitively, trimmed: such a value is not a wrong one. */
function lenientMatch(node: Schema, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const values = ((node.anyOf ?? node.oneOf ?? [node]) as Schema[]).flatMap(
    (b) => (resolve(b).enum as unknown[] | undefined) ?? [],
  );
  return values.some((v) => typeof v === 'string' && v.toLowerCase() === value.trim().toLowerCase());
}

function invalidOfBranch(
  node: Schema,
  overrides: Overrides,
  at: string,
  out: fc.Arbitrary<unknown>[],
  structural: fc.Arbitrary<unknown>[],
): void {
  if (Array.isArray(node.enum)) out.push(fc.string({ maxLength: 12 }).map((s) => `zz-${s}`));
  const kinds = types(node) ?? [];
  if (kinds.includes('integer')) {
    const { minimum: min, maximum: max } = node;
    out.push(fc.integer({ min: -1000, max: 1000 }).map((n) => n + 0.5));
    if (min !== undefined) out.push(fc.constantFrom(min - 1, min - 1e9, -Number.MAX_VALUE));
    if (max !== undefined) out.push(fc.constantFrom(max + 1, max + 1e9, Number.MAX_VALUE));
  }
  if (kinds.includes('number')) {
    const { minimum: min, maximum: max } = node;
    // A digit more than multipleOf allows (19.99 → 19.995).
    if (node.multipleOf !== undefined)
      out.push(fc.integer({ min: 1, max: 9999 }).map((n) => n * node.multipleOf + node.multipleOf / 2));
    if (min !== undefined)
      out.push(fc.double({ max: min, maxExcluded: true, noNaN: true, noDefaultInfinity: true }));
    if (max !== undefined)
      out.push(fc.double({ min: max, minExcluded: true, noNaN: true, noDefaultInfinity: true }));
  }
  if (kinds.includes('string')) {
    if (node.maxLength !== undefined) {
      const max = node.maxLength as number;
      out.push(
        fc
          .tuple(fc.string({ unit: textChar, minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 64 }))
          // Not white space at either end: the service trims text, and "\n" × 2,081 is empty.
          .map(([seed, over]) => `x${fill(seed, max + over - 2)}x`),
      );
    }
    if ((node.minLength ?? 0) > 0) out.push(fc.constant(''));
    if (node.format === 'uuid' || node.pattern) {
      out.push(
        fc.uuid().map((u) => u.slice(1)),
        fc.uuid().map((u) => `${u}0`),
        fc.uuid().map((u) => u.replaceAll('-', '')),
        fc.uuid().map((u) => `{${u}}`),
        fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
      );
    }
  }
  if (kinds.includes('array')) {
    const item = node.items ? valid(node.items, overrides, `${at}[]`) : fc.constant(1);
    if (node.maxItems !== undefined) {
      const max = node.maxItems as number;
      structural.push(
        fc.tuple(item, fc.integer({ min: max + 1, max: max + 20 })).map(([one, n]) => Array(n).fill(one)),
      );
    }
    if ((node.minItems ?? 0) > 0) structural.push(fc.constant([]));
    if (node.items) {
      const badItem = invalid(node.items, overrides, `${at}[]`);
      structural.push(
        fc.tuple(fc.array(item, { maxLength: 3 }), badItem, fc.nat()).map(([items, bad, i]) => {
          const copy = [...items];
          copy.splice(i % (copy.length + 1), 0, bad);
          return copy;
        }),
      );
    }
  }
  if (kinds.includes('object')) {
    const properties = (node.properties ?? {}) as Record<string, Schema>;
    const required = (node.required ?? []) as string[];
    const base = valid(node, overrides, at) as fc.Arbitrary<Record<string, unknown>>;
    if (required.length) {
      structural.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([value, key]) => {
          const { [key]: _dropped, ...rest } = value;
          return rest;
        }),
      );
    }
    // A property that accepts anything (a read-only field of the read shape, ignored on writes)
    // has no invalid value to draw: looking for one would never end.
    const mutable = Object.keys(properties).filter(
      (k) => !overrides.keep?.(join(at, k)) && !acceptsAnything(properties[k]!),
    );
    // A strict object refuses a name it does not declare (unknown_field / unknown_parameter).
    if (node.additionalProperties === false) {
      structural.push(
        fc
          .tuple(base, fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }))
          .map(([value, name]) => ({ ...value, [`zz${name.replace(/[^A-Za-z0-9]/g, '')}Unknown`]: 1 })),
      );
    }
    if (mutable.length) {
      structural.push(
        fc
          .constantFrom(...mutable)
          .chain((key) =>
            fc
              .tuple(base, invalid(properties[key]!, overrides, join(at, key)))
              .map(([value, bad]) => ({ ...value, [key]: bad })),
          ),
      );
    }
  }
}

/** A schema with no constraint at all (`{}`, or only words): every value fits it. */
function acceptsAnything(schema: Schema): boolean {
  const node = resolve(schema);
  return Object.keys(node).every((k) => ['description', 'title', 'readOnly', 'deprecated'].includes(k));
}

/**
 * Characters a text rule has to take a side on: C0 and C1 controls, DEL, white space of several
 * kinds, a byte order mark, U+0000 and an unpaired surrogate. Edges put them inside a value; the
 * white-space ones at either end too.
 */
const PROBES = [
  '\u0000',
  '\u0001',
  '\t',
  '\n',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u0085',
  '\u009f',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '\ud800',
];
const OUTER_PROBES = [' ', '\t', '\u00a0', '\u2028', '\ufeff', '\u0001'];

export interface Edges {
  /** Values the document accepts, at its bounds and around its patterns. */
  inside: unknown[];
  /** Values the document refuses, one step past a bound or one character off a pattern. */
  outside: unknown[];
}

/**
 * Values at the documented edges of one field, on both sides: each bound and one step past it
 * (minimum, maximum and their exclusive forms, one multipleOf step, minLength and maxLength,
 * minItems and maxItems), samples of a pattern and the same with a probe character put in, each
 * enumerated value and one that is not, values of other types. Whether each is inside or outside
 * is the document's own word (Ajv): `fitsValue` decides (a coercing one for query parameters,
 * whose values are text: `text` draws strings only). Nothing here knows a field by name.
 */
export function edges(
  schema: Schema,
  fitsValue: (schema: Schema, value: unknown) => boolean,
  options: { text?: boolean } = {},
): Edges {
  const seen = new Map<string, unknown>();
  const add = (value: unknown) => {
    if (value === undefined) return;
    const v = options.text && typeof value !== 'string' ? JSON.stringify(value) : value;
    seen.set(JSON.stringify(v), v);
  };
  collectEdges(resolve(schema), add, fitsValue, options.text === true);
  const result: Edges = { inside: [], outside: [] };
  for (const value of seen.values()) (fitsValue(schema, value) ? result.inside : result.outside).push(value);
  return result;
}

function collectEdges(
  node: Schema,
  add: (value: unknown) => void,
  fitsValue: (schema: Schema, value: unknown) => boolean,
  text: boolean,
): void {
  const branches = ((node.anyOf ?? node.oneOf) as Schema[] | undefined) ?? [node];
  if (branches.length > 1 || branches[0] !== node) {
    for (const branch of branches) collectEdges(resolve(branch), add, fitsValue, text);
    return;
  }
  if (node.const !== undefined) add(node.const);
  if (Array.isArray(node.enum)) {
    for (const value of node.enum as unknown[]) {
      add(value);
      if (typeof value === 'string') add(value.toUpperCase());
    }
    add('zz-not-listed');
  }
  const kinds = types(node) ?? [];
  if (!text) {
    // Another type than the field's: each of these fits some field and refuses another.
    for (const other of [null, true, 42, '42', [], {}]) add(other);
  }
  if (kinds.includes('boolean')) for (const v of text ? ['true', 'false', 'yes'] : [true, false]) add(v);
  if (kinds.includes('integer') || kinds.includes('number'))
    numberEdges(node, kinds.includes('integer'), add);
  if (kinds.includes('string')) stringEdges(node, add, fitsValue);
  if (kinds.includes('array')) {
    const item = node.items ? (edges(node.items, fitsValue).inside[0] ?? 'x') : 'x';
    const counts = [0, 1, node.minItems - 1, node.minItems, node.maxItems, node.maxItems + 1];
    for (const n of counts) if (Number.isInteger(n) && n >= 0) add(Array(n).fill(item));
  }
}

function numberEdges(node: Schema, integer: boolean, add: (value: unknown) => void): void {
  const step: number = node.multipleOf ?? (integer ? 1 : 1e-6);
  const round = (n: number) => Number(n.toFixed(9));
  const { minimum: min, maximum: max, exclusiveMinimum: xmin, exclusiveMaximum: xmax } = node;
  // Each bound, and one step past it (on the wrong side for an inclusive one, the right side for
  // an exclusive one: the bound itself is then the value just outside).
  for (const [bound, next] of [
    [min, -step],
    [max, step],
    [xmin, step],
    [xmax, -step],
  ] as const) {
    if (bound === undefined) continue;
    add(bound);
    add(round(bound + next));
  }
  // Without a bound on a side, a value far on that side: a bound the document leaves out shows.
  if (min === undefined && xmin === undefined) add(-1e12);
  if (max === undefined && xmax === undefined) add(1e12);
  const low = min ?? xmin ?? 0;
  const high = max ?? xmax ?? low + 100;
  const middle = round(low + Math.min(12.34, (high - low) / 2));
  add(middle);
  // One decimal more than multipleOf allows (19.99 → 19.991), and a fraction for an integer.
  if (node.multipleOf !== undefined) add(round(middle + node.multipleOf / 10));
  if (integer) add(Math.floor(middle) + 0.5);
}

function stringEdges(
  node: Schema,
  add: (value: unknown) => void,
  fitsValue: (schema: Schema, value: unknown) => boolean,
): void {
  const { minLength: minL, maxLength: maxL } = node;
  const bare = { ...node, minLength: undefined, maxLength: undefined };
  // Values of the pattern (or format), whatever their length: the bases the edges are built on.
  let bases: string[] = [];
  if (node.format === 'uuid') bases = ['3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c'];
  else if (typeof node.pattern === 'string') {
    const pattern = new RegExp(node.pattern, 'u');
    bases = fc.sample(fc.stringMatching(pattern, { size: 'small' }), { numRuns: 40, seed: 40 });
    // The shortest few, and the plainest: a sample of all ASCII letters and digits if there is one.
    bases.sort((a, b) => a.length - b.length);
    const plain = bases.find((s) => /^[\x21-\x7e]+$/.test(s) && !/^\s|\s$/.test(s));
    bases = [...(plain ? [plain] : []), ...bases.filter((s) => s.length > 0).slice(0, 2)];
  } else bases = ['Edge value'];
  bases = bases.filter((s) => fitsValue(bare, s));
  for (const s of bases) add(s);
  add('');
  add(' ');
  add('zz edge');
  // Lengths from bases without white space at either end: the service trims text before it
  // counts (a leniency the document does not state: docs/reliability.md, "Known limits").
  const unpadded = bases.filter((s) => !/^\s|\s$/.test(s));
  for (const n of [minL - 1, minL, maxL, maxL + 1]) {
    if (!Number.isInteger(n) || n < 0) continue;
    add('x'.repeat(n));
    for (const s of unpadded.slice(0, 2)) add(n <= s.length ? s.slice(0, n) : s + 'x'.repeat(n - s.length));
  }
  if (node.format === 'uuid') {
    const u = bases[0]!;
    add(u.toUpperCase());
    add(u.slice(1));
    add(`${u}0`);
    add(u.replaceAll('-', ''));
  }
  const base = bases[0] ?? 'Edge value';
  const at = Math.max(1, Math.floor(base.length / 2));
  for (const probe of PROBES) add(base.slice(0, at) + probe + base.slice(at));
  for (const probe of OUTER_PROBES) {
    add(probe + base);
    add(base + probe);
  }
}
