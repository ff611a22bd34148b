import type { FastifyInstance } from 'fastify';
import { type ProblemError, problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';

/**
 * Fastify answers a known path with an unknown method as 404. We answer 405 with `Allow`, so a
 * client that used the wrong verb learns that, not that the resource is missing.
 */
export function registerMethodNotAllowed(app: FastifyInstance): void {
  // Keyed by the pattern's text: GET /listings/:id and PUT /listings/:externalReference are one path.
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const source = `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`;
    let entry = routes.get(source);
    if (!entry) {
      entry = { pattern: new RegExp(source), methods: new Set() };
      routes.set(source, entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  // Every pattern that matches counts: the router sends GET /listings/bulk-upsert to GET
  // /listings/:id, so POST (the literal route) and GET, PUT, DELETE (the parametric ones) are allowed.
  app.decorate('allowedMethods', (path: string): string[] => {
    const allowed = new Set<string>();
    for (const { pattern, methods } of routes.values())
      if (pattern.test(path)) for (const method of methods) allowed.add(method);
    return [...allowed];
  });
}

export function methodNotAllowed(method: string, allowed: string[]): ProblemError {
  const answer = problem('METHOD_NOT_ALLOWED', messages.methodNotAllowed(method, allowed));
  answer.headers.Allow = allowed.join(', ');
  return answer;
}

declare module 'fastify' {
  interface FastifyInstance {
    allowedMethods(path: string): string[];
  }
}
