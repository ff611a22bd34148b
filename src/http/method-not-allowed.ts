import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../domain/errors.js';

/**
 * Fastify answers a known path with an unknown method as 404. We answer 405 with `Allow`, so a
 * client that used the wrong verb learns that, not that the resource is missing.
 */
export function registerMethodNotAllowed(app: FastifyInstance): void {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const source = `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`;
    let entry = routes.find((r) => r.pattern.source === source);
    if (!entry) {
      entry = { pattern: new RegExp(source), methods: new Set() };
      routes.push(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  app.decorate('allowedMethods', (path: string): string[] => {
    const found = routes.find((r) => r.pattern.test(path));
    return found ? [...found.methods] : [];
  });
}

export function methodNotAllowed(method: string, allowed: string[]): ProblemError {
  const problem = new ProblemError(
    405,
    'METHOD_NOT_ALLOWED',
    `${method} is not allowed here; allowed: ${allowed.join(', ')}.`,
  );
  problem.headers.Allow = allowed.join(', ');
  return problem;
}

declare module 'fastify' {
  interface FastifyInstance {
    allowedMethods(path: string): string[];
  }
}
