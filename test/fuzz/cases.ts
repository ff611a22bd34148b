import fc from 'fast-check';
import {
  describedEnum,
  methodsAt,
  type Operation,
  type Parameter,
  resolve,
  type Schema,
} from './document.js';
import { invalid, textOf, valid } from './schema-arbitrary.js';
import { DEALERS, LISTING_TOKENS, OTHER_REFS, type Who, WRITER_REFS } from './world.js';
import { listingOverrides } from './writes.js';

/**
 * Fuzz cases, drawn from the OpenAPI document. A case is plain JSON with world tokens
 * (test/fuzz/world.ts), so a failing one is printed as it is and kept in corpus.json.
 *
 * `kind` says what the case promises about the answer:
 * - valid: every part fits the document (the service may still refuse it by rules the document
 *   states only in prose: unknown dealer, price required when active...), so any documented answer;
 * - invalid: exactly one part breaks the document: a 4xx (a bulk item: that item's error);
 * - raw: a body as bytes, under some content type: invalid JSON must be 400 INVALID_JSON;
 * - method: a method the path does not have: 405 with Allow;
 * - write: a listing write valid by every documented rule (test/fuzz/writes.ts): written, or 403
 *   for a dealer outside the writer's scope.
 */
export interface Case {
  kind: 'valid' | 'invalid' | 'raw' | 'method' | 'write';
  op: string;
  method: string;
  who: Who;
  /** The path with tokens, each parameter already URL-encoded. */
  path: string;
  query: [string, string][];
  /** A JSON body (valid and invalid cases). */
  json?: unknown;
  /** A raw body and its content type (raw cases). */
  raw?: { body: string; contentType?: string };
  /** Which part an invalid case broke, for the failure report. */
  broke?: string;
}

export const whoArb: fc.Arbitrary<Who> = fc.constantFrom<Who>(
  ...([
    'writer',
    'writer',
    'writer',
    'writer',
    'writer',
    'writer-key',
    'reader',
    'reader',
    'none',
    'unknown-secret',
    'malformed',
  ] as Who[]),
);

const dealerToken = fc.constantFrom(...DEALERS).map((key) => `⟪dealer:${key}⟫`);
const codeToken = fc
  .tuple(fc.constantFrom(...DEALERS), fc.constantFrom('', ':upper', ':lower'))
  .map(([key, change]) => `⟪code:${key}${change}⟫`);
const listingToken = fc.constantFrom(...LISTING_TOKENS).map((key) => `⟪listing:${key}⟫`);
/** "." and ".." are dot segments: URL parsers (undici's too) resolve them to another path. */
const isDotSegment = (segment: string) => segment === '.' || segment === '..';
const reference = fc
  .oneof(
    fc.constantFrom(...WRITER_REFS, ...OTHER_REFS),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 }).map((s) => `fz-${s}`),
    textOf(1, 128),
  )
  .filter((ref) => !isDotSegment(ref));

/** Values a query parameter takes as the document describes it, as they travel: text. */
function validParam(p: Parameter): fc.Arbitrary<string> {
  const schema = resolve(p.schema);
  if (schema.format === 'uuid') {
    const world = p.in === 'path' && p.name === 'listing' ? listingToken : dealerToken;
    return fc.oneof({ weight: 4, arbitrary: world }, { weight: 1, arbitrary: fc.uuid({ version: 4 }) });
  }
  if (p.name === 'cursor') return fc.constant('⟪cursor:w⟫');
  if (/updated_?[sS]ince/.test(p.name)) {
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (/location_?[cC]ode/.test(p.name)) return codeToken;
  if (schema.type === 'boolean') return fc.constantFrom('true', 'false', '1', '0', 'TRUE', 'False');
  if (schema.type === 'integer') {
    return fc.integer({ min: schema.minimum ?? 0, max: 1000 }).map(String);
  }
  const described = describedEnum(schema);
  if (described) return fc.constantFrom(...described);
  return (valid(schema) as fc.Arbitrary<unknown>).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/** Text a query parameter must refuse (400 INVALID_QUERY), by its schema. */
function invalidParam(p: Parameter): fc.Arbitrary<string> | undefined {
  const schema = resolve(p.schema);
  if (schema.type === 'boolean') {
    return fc.constantFrom('yes', 'no', 'on', '2', '-1', 'truee', '', 'null', 't');
  }
  if (schema.type === 'integer') {
    return fc.oneof(
      // Surrounding white space is trimmed by the service, as in every query value: not a case.
      // (Any count of digits is a valid positive integer: docs/contract.md#pages.)
      fc.constantFrom('0', '-1', '1.5', 'abc', '', '1e3', '0x10', '1 2', '00'),
      fc.integer({ min: -1000, max: (schema.minimum ?? 1) - 1 }).map(String),
    );
  }
  if (schema.format === 'uuid' || Array.isArray(schema.enum) || schema.maxLength || schema.minLength) {
    return (
      (invalid(schema) as fc.Arbitrary<unknown>)
        .filter((v) => typeof v === 'string' || typeof v === 'number')
        .map(String)
        .filter((v) => !isValidText(schema, v.trim()))
        // A value whose URL form passes the request line's 16 KiB (4,097 characters of 4-byte
        // code points for a cursor) meets that limit first (414/431, test/protocol-refusals), not
        // the parameter's own rule.
        .filter((v) => encodeURIComponent(v).length <= 8_192)
    );
  }
  if (/updated_?[sS]ince/.test(p.name)) {
    return fc.constantFrom('yesterday', '2026-13-01T00:00:00Z', '2026-02-30', 'now', '12:00', 'x');
  }
  return undefined;
}

/** A string that the schema accepts after all (a lowercase enum value sent in capitals...). */
function isValidText(schema: Schema, v: string): boolean {
  if (Array.isArray(schema.enum))
    return schema.enum.some((e: unknown) => String(e).toLowerCase() === v.trim().toLowerCase());
  if (schema.format === 'uuid')
    return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
  const length = [...v].length;
  return length >= (schema.minLength ?? 0) && length <= (schema.maxLength ?? Number.POSITIVE_INFINITY);
}

function pathOf(op: Operation, values: Record<string, string>): string {
  return op.template.replace(/\{([^}]+)\}/g, (_all, name: string) => encodeSegment(values[name]!));
}

/** A path segment as a client sends it; a world token stays as it is (it becomes a UUID). */
function encodeSegment(value: string): string {
  if (/^⟪[^⟫]+⟫$/.test(value)) return value;
  // A lone surrogate has no UTF-8 form: no client can send one, so it travels as U+FFFD.
  return encodeURIComponent(
    value.replace(/[\uD800-\uDFFF]/g, (c, i: number, s: string) => {
      const pair = /[\uD800-\uDBFF]/.test(c)
        ? /[\uDC00-\uDFFF]/.test(s[i + 1] ?? '')
        : /[\uD800-\uDBFF]/.test(s[i - 1] ?? '');
      return pair ? c : '\uFFFD';
    }),
  );
}

function pathValues(op: Operation): fc.Arbitrary<Record<string, string>> {
  return fc.record(
    Object.fromEntries(
      op.pathParams.map((p) => [p.name, resolve(p.schema).format === 'uuid' ? validParam(p) : reference]),
    ),
  );
}

/** A few of the operation's query parameters (canonical names and aliases alike), valid. */
function queryValues(op: Operation): fc.Arbitrary<[string, string][]> {
  if (!op.query.length) return fc.constant([]);
  return fc
    .subarray(op.query, { maxLength: Math.min(4, op.query.length) })
    .chain((params) =>
      fc.tuple(...params.map((p) => validParam(p).map((v): [string, string] => [p.name, v]))),
    )
    .map((pairs) => pairs as [string, string][]);
}

export function validCase(op: Operation): fc.Arbitrary<Case> {
  return fc
    .record({
      who: whoArb,
      path: pathValues(op),
      query: queryValues(op),
      json: op.body ? valid(op.body) : fc.constant(undefined),
    })
    .map(({ who, path, query, json }) => ({
      kind: 'valid' as const,
      op: op.id,
      method: op.method,
      who,
      path: pathOf(op, path),
      query,
      ...(json === undefined ? {} : { json }),
    }));
}

/** One part broken: a query parameter, a path parameter, or the body. */
export function invalidCase(op: Operation): fc.Arbitrary<Case> | undefined {
  const brokenQuery = op.query
    .map((p) => ({ p, bad: invalidParam(p) }))
    .filter((x): x is { p: Parameter; bad: fc.Arbitrary<string> } => x.bad !== undefined);
  const brokenPath = op.pathParams
    .map((p) => ({ p, bad: invalidParam(p) }))
    .filter((x): x is { p: Parameter; bad: fc.Arbitrary<string> } => x.bad !== undefined);
  const options: fc.Arbitrary<Case>[] = [];
  const base = fc.record({
    who: fc.constantFrom<Who>('writer', 'writer-key'),
    path: pathValues(op),
    query: queryValues(op),
  });
  if (brokenQuery.length) {
    options.push(
      fc
        .tuple(
          base,
          fc
            .constantFrom(...brokenQuery)
            .chain(({ p, bad }) => bad.map((v) => [p.name, v] as [string, string])),
        )
        .map(([b, [name, value]]) => ({
          kind: 'invalid' as const,
          op: op.id,
          method: op.method,
          who: b.who,
          path: pathOf(op, b.path),
          query: [...b.query.filter(([n]) => n !== name), [name, value] as [string, string]],
          broke: `query ${name}`,
        })),
    );
  }
  if (brokenPath.length) {
    options.push(
      fc
        .tuple(
          base,
          fc
            .constantFrom(...brokenPath)
            .chain(({ p, bad }) => bad.map((v) => [p.name, v] as [string, string])),
        )
        .filter(([, [, value]]) => value !== '' && !isDotSegment(value))
        .map(([b, [name, value]]) => ({
          kind: 'invalid' as const,
          op: op.id,
          method: op.method,
          who: b.who,
          path: pathOf(op, { ...b.path, [name]: value }),
          query: b.query,
          broke: `path ${name}`,
        })),
    );
  }
  if (op.body) {
    options.push(
      // Built on bodies valid by every rule, so the one broken part is what the answer is about.
      fc.tuple(base, invalid(op.body, listingOverrides(op))).map(([b, json]) => ({
        kind: 'invalid' as const,
        op: op.id,
        method: op.method,
        who: b.who,
        path: pathOf(op, b.path),
        query: b.query,
        json,
        broke: 'body',
      })),
    );
  }
  return options.length ? fc.oneof(...options) : undefined;
}

const rawBodies = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '',
    '{',
    '[',
    '{"title":',
    '{"a":1,}',
    "{'a':1}",
    'null',
    'true',
    '"x"',
    '1e999',
    '[]',
    '{}',
    '\uFEFF{}',
  ),
  fc.integer({ min: 1, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 1, max: 20_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  fc.json({ maxDepth: 3 }),
);
const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/jsonx',
  'application/merge-patch+json',
  undefined,
);

export function rawCase(op: Operation): fc.Arbitrary<Case> | undefined {
  if (!op.body) return undefined;
  return fc
    .record({ who: whoArb, path: pathValues(op), body: rawBodies, contentType: contentTypes })
    .map(({ who, path, body, contentType }) => ({
      kind: 'raw' as const,
      op: op.id,
      method: op.method,
      who,
      path: pathOf(op, path),
      query: [],
      raw: { body, ...(contentType ? { contentType } : {}) },
    }));
}

const ALL_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];

export function methodCase(op: Operation): fc.Arbitrary<Case> | undefined {
  const missing = ALL_METHODS.filter((m) => !methodsAt(op.template).includes(m));
  if (!missing.length) return undefined;
  return fc
    .record({ who: whoArb, path: pathValues(op), method: fc.constantFrom(...missing) })
    .map(({ who, path, method }) => ({
      kind: 'method' as const,
      op: op.id,
      method,
      who,
      path: pathOf(op, path),
      query: [],
    }));
}
