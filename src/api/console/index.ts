import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { problem } from '../../domain/errors.js';
import { messages } from '../../domain/messages.js';
import { DOCS_CSP } from '../docs/index.js';

/** Where the console's files are: console/ at the top of the repository (next to docs/). */
const CONSOLE_DIR = path.resolve(import.meta.dirname, '../../../console');
const CONSOLE_PREFIX = '/console';

/** What each kind of console file is served as; other files in console/ (tsconfig.json) are not served. */
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  // Declared by the page: without it, every load asked for /favicon.ico and got a 404.
  '.svg': 'image/svg+xml',
};

/**
 * The files served: the console's modules, its style and icon at the top, and its views in
 * views/ (one module per screen). Listed once at start from the directory, so a new module is
 * served without a second list to keep; only these names are ever looked up (no path is joined
 * from a URL).
 */
export function consoleFiles(dir = CONSOLE_DIR): Map<string, { type: string; body: Buffer }> {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const folder of ['', 'views']) {
    for (const name of readdirSync(path.join(dir, folder)).sort()) {
      const type = TYPES[path.extname(name)];
      if (type)
        files.set(path.posix.join(folder, name), { type, body: readFileSync(path.join(dir, folder, name)) });
    }
  }
  return files;
}

// The docs page's policy, with nothing from anywhere but here: the console holds an operator token.
const CSP = Object.entries({ ...DOCS_CSP, 'img-src': "'self'" })
  .map(([name, sources]) => `${name} ${sources}`)
  .join('; ');

/**
 * The operator's console (docs/operations.md: the console): a page and its few static files, read once at
 * start, that call the admin API of this same service with the operator's token. No build step,
 * no framework, no CDN.
 */
export const consolePages: FastifyPluginAsync = async (app) => {
  const page = readFileSync(path.join(CONSOLE_DIR, 'index.html'));
  const assets = consoleFiles();
  const headers = {
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    // A new version of the service serves new files at the same names.
    'Cache-Control': 'no-cache',
  };
  app.get(CONSOLE_PREFIX, { schema: { hide: true } }, async (_request, reply) =>
    reply.headers({ ...headers, 'Content-Type': 'text/html; charset=utf-8' }).send(page),
  );
  const serve = (file: string, reply: FastifyReply) => {
    const asset = assets.get(file);
    if (!asset) throw problem('NOT_FOUND', messages.noConsoleFile(file));
    return reply.headers({ ...headers, 'Content-Type': asset.type }).send(asset.body);
  };
  app.get<{ Params: { file: string } }>(
    `${CONSOLE_PREFIX}/:file`,
    { schema: { hide: true } },
    async (request, reply) => serve(request.params.file, reply),
  );
  app.get<{ Params: { file: string } }>(
    `${CONSOLE_PREFIX}/views/:file`,
    { schema: { hide: true } },
    async (request, reply) => serve(`views/${request.params.file}`, reply),
  );
};
