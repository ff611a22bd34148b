import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
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

/** How long a CONNECT's client has to read its answer before the socket is destroyed. */
const LINGER_MS = 2_000;

/**
 * Server 'connect' listener. Node hands a CONNECT request to 'connect' listeners only, with the
 * bare socket, and destroys the socket when there is none: the client got no answer at all. This
 * answers it through the app like any request (405 with `Allow` on a routed path, else 404, the
 * door's refusals first), then closes the connection: this service is no proxy.
 */
export function answerConnect(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, socket: Duplex): void => {
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.on('finish', () => {
      res.detachSocket(socket as Socket);
      socket.end();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    });
    socket.on('error', () => socket.destroy());
    handler(req, res);
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    allowedMethods(path: string): string[];
  }
}
