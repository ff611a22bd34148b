import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { problem } from '../../domain/errors.js';
import { DOCS_CSP } from '../docs/index.js';

/** Where the console's files are: console/ at the top of the repository (next to docs/). */
const CONSOLE_DIR = path.resolve(import.meta.dirname, '../../../console');
export const CONSOLE_PREFIX = '/console';

const FILES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

// The docs page's policy, with nothing from anywhere but here: the console holds an operator token.
const CSP = Object.entries({ ...DOCS_CSP, 'img-src': "'self'" })
  .map(([name, sources]) => `${name} ${sources}`)
  .join('; ');

/**
 * The operator's console (docs/operations.md: the console): three static files, read once at
 * start, that call the admin API of this same service with the operator's token. No build step,
 * no framework, no CDN.
 */
export const consolePages: FastifyPluginAsync = async (app) => {
  const read = (file: string) => readFileSync(path.join(CONSOLE_DIR, file));
  const page = read('index.html');
  const assets = new Map(Object.keys(FILES).map((file) => [file, read(file)]));
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
  app.get<{ Params: { file: string } }>(
    `${CONSOLE_PREFIX}/:file`,
    { schema: { hide: true } },
    async (request, reply) => {
      const body = assets.get(request.params.file);
      if (!body) throw problem('NOT_FOUND', `No console file ${request.params.file}.`);
      return reply.headers({ ...headers, 'Content-Type': FILES[request.params.file]! }).send(body);
    },
  );
};
