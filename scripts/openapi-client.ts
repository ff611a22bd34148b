/**
 * Generates the client package's code that comes from docs/openapi.json:
 * - packages/client/src/openapi.ts: the types, with openapi-typescript;
 * - packages/client/src/listing-fields.ts: each writable listing field and the JSON type it takes,
 *   which `forecourt import` converts CSV cells by (so a new field needs no change in the importer).
 * `npm run openapi:client` after `npm run openapi`. test/client.test.ts fails while a committed
 * file differs from what this produces, so the client can never drift from the document.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
export const DOCUMENT = path.join(ROOT, 'docs/openapi.json');
export const TYPES_FILE = path.join(ROOT, 'packages/client/src/openapi.ts');
export const FIELDS_FILE = path.join(ROOT, 'packages/client/src/listing-fields.ts');

// The linter formats our sources its own way; a generated file is kept byte-for-byte as generated.
const HEADER = `${COMMENT_HEADER.replace(' */', ' * Source: docs/openapi.json. Regenerate: npm run openapi:client\n */')}// biome-ignore-all format: generated\n// biome-ignore-all lint: generated\n\n`;

type Schema = {
  $ref?: string;
  type?: string | string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  deprecated?: boolean;
  properties?: Record<string, Schema>;
};

export async function generateClientTypes(document = DOCUMENT): Promise<string> {
  const ast = await openapiTS(JSON.parse(readFileSync(document, 'utf8')));
  return `${HEADER}${astToString(ast)}`;
}

/** The JSON types a schema allows, `null` left out. */
function jsonTypes(schema: Schema, resolve: (ref: string) => Schema): string[] {
  if (schema.$ref) return jsonTypes(resolve(schema.$ref), resolve);
  const own = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((s) => jsonTypes(s, resolve));
  return [...new Set([...own, ...nested])].filter((type) => type !== 'null');
}

/** The body of the PUT of one listing: the write shape every import row becomes. */
export function generateListingFields(document = DOCUMENT): string {
  const doc = JSON.parse(readFileSync(document, 'utf8'));
  const resolve = (ref: string): Schema =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Record<string, unknown>, key) => node[key] as Record<string, unknown>, doc) as Schema;
  const put = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)
    .map((ops) => ops.put as { requestBody?: { content: Record<string, { schema: Schema }> } } | undefined)
    .find((op) => op?.requestBody);
  const body = put?.requestBody?.content['application/json']?.schema;
  if (!body) throw new Error('docs/openapi.json: no PUT operation with a JSON body');
  const write = body.$ref ? resolve(body.$ref) : body;
  const fields: Record<string, string> = {};
  for (const [name, schema] of Object.entries(write.properties ?? {})) {
    const types = jsonTypes(schema, resolve);
    // Read-only fields (refused on write) have no type; several types would need a guess.
    if (types.length === 1) fields[name] = types[0]!;
  }
  const lines = Object.entries(fields).map(([name, type]) => `  ${JSON.stringify(name)}: '${type}',`);
  return `${HEADER}/** Each writable listing field (aliases included) and the JSON type it takes. */\nexport const LISTING_FIELD_TYPES = {\n${lines.join('\n')}\n} as const;\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  writeFileSync(TYPES_FILE, await generateClientTypes());
  writeFileSync(FIELDS_FILE, generateListingFields());
  for (const file of [TYPES_FILE, FIELDS_FILE]) {
    process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  }
}
