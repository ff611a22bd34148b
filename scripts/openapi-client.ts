/**
 * Generates the client's types (src/client/openapi.ts) from docs/openapi.json with
 * openapi-typescript: `npm run openapi:client` after `npm run openapi`. test/client.test.ts
 * fails while the committed file differs from what this produces, so the client can never drift
 * from the document the service serves.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
export const DOCUMENT = path.join(ROOT, 'docs/openapi.json');
export const TYPES_FILE = path.join(ROOT, 'src/client/openapi.ts');

// The linter formats our sources its own way; a generated file is kept byte-for-byte as generated.
const HEADER = `${COMMENT_HEADER.replace(' */', ' * Source: docs/openapi.json. Regenerate: npm run openapi:client\n */')}// biome-ignore-all format: generated\n// biome-ignore-all lint: generated\n\n`;

export async function generateClientTypes(document = DOCUMENT): Promise<string> {
  const ast = await openapiTS(JSON.parse(readFileSync(document, 'utf8')));
  return `${HEADER}${astToString(ast)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  writeFileSync(TYPES_FILE, await generateClientTypes());
  process.stderr.write(`wrote ${path.relative(process.cwd(), TYPES_FILE)}\n`);
}
