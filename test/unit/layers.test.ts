import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// The layers of src/ and what each may import: one way down, as a request flows (route → domain
// → store), with background work beside the HTTP layer: both run the domain, neither knows the
// other (runtime.ts wires them). A part not listed here is an entry point (app, compose, runtime,
// server, cli, demo) or a leaf below every layer (config, log, outbound, ratelimit).

const SRC = path.resolve(import.meta.dirname, '../../src');

const MAY_IMPORT: Record<string, readonly string[]> = {
  store: ['config.ts'],
  domain: ['store', 'outbound'],
  background: ['domain', 'store', 'config.ts'],
  http: ['domain', 'store', 'config.ts', 'log.ts', 'ratelimit'],
  api: ['http', 'domain', 'store'],
};

/** The part of src/ a file is in: its top folder, or the file itself at the top. */
const partOf = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(file);
    else if (file.endsWith('.ts')) yield file;
  }
}

/** Every part of src/ a file imports (types too: a type is a dependency of the reader). */
function importedParts(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const parts = new Set<string>();
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts');
    if (!target.startsWith(SRC + path.sep)) continue;
    parts.add(partOf(target));
  }
  return parts;
}

test('each layer of src/ imports only the layers below it', () => {
  const offenders: string[] = [];
  for (const file of sources(SRC)) {
    const part = partOf(file);
    const allowed = MAY_IMPORT[part];
    if (!allowed) continue;
    for (const imported of importedParts(file)) {
      if (imported !== part && !allowed.includes(imported))
        offenders.push(`${path.relative(SRC, file)} imports ${imported}`);
    }
  }
  assert.deepEqual(offenders, []);
});

test('the layering rules name folders that exist', () => {
  const parts = new Set(readdirSync(SRC));
  for (const [part, allowed] of Object.entries(MAY_IMPORT))
    for (const name of [part, ...allowed]) assert.ok(parts.has(name), `src/${name}`);
});
