/**
 * Writes the partner OpenAPI document to docs/openapi.json (or stdout with --stdout), exactly as
 * the service serves it at /api/external/v1/openapi.json: the app is built on a throwaway
 * embedded database and asked for it. `npm run openapi` after changing a route schema;
 * test/openapi.test.ts fails while the committed file is stale.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { start } from '../src/runtime.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-openapi-'));
const config = parseConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
const running = await start(config, createLogger(config));
try {
  const text = `${JSON.stringify(running.app.swagger(), null, 2)}\n`;
  if (process.argv.includes('--stdout')) process.stdout.write(text);
  else {
    const file = path.resolve(import.meta.dirname, '../docs/openapi.json');
    writeFileSync(file, text);
    process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  }
} finally {
  await running.close();
  rmSync(dataDir, { recursive: true, force: true });
}
