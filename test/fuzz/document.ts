import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The partner operations of docs/openapi.json, as the fuzzer needs them: method, path template,
 * parameters with their schemas, the request-body schema, and for every documented status the
 * error codes its description names. The document is the source; nothing here is hand-listed.
 */

export type Schema = Record<string, any>;

export const PREFIX = '/api/external/v1';

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
  description: string;
}

export interface Operation {
  id: string;
  method: string;
  template: string;
  pathParams: Parameter[];
  query: Parameter[];
  body: Schema | undefined;
  /** Documented status → the error codes its description names (empty for successes). */
  responses: Map<number, string[]>;
}

export const document: Schema = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../docs/openapi.json'), 'utf8'),
);

/** Resolves a local `#/components/...` reference. */
export function resolve(schema: Schema): Schema {
  let node = schema;
  while (typeof node.$ref === 'string') {
    const parts = (node.$ref as string).replace(/^#\//, '').split('/');
    node = parts.reduce((n: Schema, key) => n[key], document);
  }
  return node;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export const operations: Operation[] = Object.entries(document.paths as Record<string, Schema>).flatMap(
  ([template, item]) =>
    METHODS.filter((m) => item[m]).map((m): Operation => {
      const op = item[m] as Schema;
      const params = ((op.parameters ?? []) as Schema[]).map((p) => resolve(p) as Parameter);
      const responses = new Map<number, string[]>();
      for (const [status, response] of Object.entries(op.responses as Record<string, Schema>)) {
        const codes = [...String(resolve(response).description ?? '').matchAll(/`([A-Z_]+)`:/g)].map(
          (match) => match[1]!,
        );
        responses.set(Number(status), codes);
      }
      return {
        id: op.operationId,
        method: m.toUpperCase(),
        template,
        pathParams: params.filter((p) => p.in === 'path'),
        query: params.filter((p) => p.in === 'query'),
        body: bodyToDraw(op.requestBody?.content?.['application/json']?.schema),
        responses,
      };
    }),
);

export function operation(id: string): Operation {
  const found = operations.find((o) => o.id === id);
  if (!found) throw new Error(`No operation ${id} in docs/openapi.json`);
  return found;
}

/**
 * The methods the document has for a path, over every template it matches: /listings/bulk-upsert
 * is also /listings/{listing}, so GET, PUT and DELETE are there as well as POST.
 */
export function methodsAt(pathname: string): string[] {
  const methods = new Set<string>();
  for (const [template, item] of Object.entries(document.paths as Record<string, Schema>)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(pathname)) for (const m of METHODS) if (item[m]) methods.add(m.toUpperCase());
  }
  return [...methods];
}

/** "One of: a, b, c." in a field's description: the enumerations the document states in prose. */
export function describedEnum(schema: Schema): string[] | undefined {
  const match = /One of: ([a-z0-9_, ]+)\./.exec(String(schema.description ?? ''));
  return match ? match[1]!.split(',').map((v) => v.trim()) : undefined;
}

// Ajv, as in test/helpers/contract.ts: the oracle that says whether a value fits a schema.
// multipleOf judged in decimal, as the document means it (19.99 is a multiple of 0.01; in binary
// floating point 19.99 / 0.01 is 1998.9999999999998).
const ajv = new Ajv2020({ strict: false, allErrors: false, multipleOfPrecision: 9 });
addFormats.default(ajv);
ajv.addSchema({ $id: 'fuzz-openapi', components: document.components }, 'fuzz-openapi');
const compiled = new WeakMap<Schema, ValidateFunction>();

/** Whether a value is valid against a schema of the document (by the document, not the service). */
export function fits(schema: Schema, value: unknown): boolean {
  let validate = compiled.get(schema);
  if (!validate) {
    const rebased = JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/', '"fuzz-openapi#/components/'),
    );
    validate = ajv.compile(rebased);
    compiled.set(schema, validate);
  }
  return validate(value) as boolean;
}

/**
 * The document describes bulk items loosely (any value: the service validates them one by one, so
 * a gateway must not refuse the batch). The fuzzer draws them as what each is checked against, a
 * ListingWrite; an item that accepts anything would have no invalid value to draw.
 */
function bodyToDraw(schema: Schema | undefined): Schema | undefined {
  if (!schema) return schema;
  const listing = { $ref: '#/components/schemas/ListingWrite' };
  const asListings = (node: Schema): Schema =>
    node.type === 'array' && node.items && Object.keys(node.items).every((k) => k === 'description')
      ? { ...node, items: listing }
      : node.type === 'object' && node.properties?.items
        ? { ...node, properties: { ...node.properties, items: asListings(node.properties.items) } }
        : node;
  return schema.anyOf ? { ...schema, anyOf: (schema.anyOf as Schema[]).map(asListings) } : asListings(schema);
}

// A query or path parameter arrives as text: judged as a validating gateway judges it, each value
// coerced to the type its schema names ("12" is an integer 12, "true" a boolean).
const coercing = new Ajv2020({ strict: false, allErrors: false, coerceTypes: true, multipleOfPrecision: 9 });
addFormats.default(coercing);
coercing.addSchema({ $id: 'fuzz-openapi', components: document.components }, 'fuzz-openapi');
const compiledText = new WeakMap<Schema, ValidateFunction>();

/** Whether a parameter's text is valid against its schema, by the document. */
export function fitsText(schema: Schema, value: unknown): boolean {
  let validate = compiledText.get(schema);
  if (!validate) {
    const rebased = JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/', '"fuzz-openapi#/components/'),
    );
    validate = coercing.compile(rebased);
    compiledText.set(schema, validate);
  }
  return validate(value) as boolean;
}
