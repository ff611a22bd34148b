import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { type ProblemError, problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { assertUrlText } from './url-text.js';

/**
 * What every request passes before any route: its X-Request-Id on the answer, one Host, the
 * instance not draining, HTTPS (or a trusted proxy saying the client used it), and a URL whose
 * text can be kept as sent. On the way out: `Connection: close` while draining, and no shared
 * cache for any answer of the APIs (docs/contract.md#caching).
 */
export function registerDoor(app: FastifyInstance): { startDraining(): void; draining(): boolean } {
  let draining = false;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    assertOneHost(request.raw);
    if (draining) {
      reply.header('Connection', 'close');
      if (request.url !== '/healthz') {
        throw problem('SERVICE_UNAVAILABLE', messages.restarting());
      }
    }
    // Behind a TLS-terminating proxy, the connection to us is plain; the proxy says what the client used.
    const socket = request.raw.socket as { encrypted?: boolean };
    if (!socket.encrypted) {
      const proto = String(request.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]!
        .trim()
        .toLowerCase();
      if (proto !== 'https') throw httpsRequired();
    }
    // The URL's text, before anything reads a parameter of it (http/url-text.ts).
    assertUrlText(request.raw.url ?? '');
  });
  app.addHook('onSend', async (request, reply) => {
    // Connections finishing a request while draining close after it, so shutdown is not held
    // up by clients keeping connections alive.
    if (draining) reply.header('Connection', 'close');
    // Refusals no route of the APIs answered (an unknown path, a malformed URL) are not cached
    // either: the APIs' own plugins set this for their routes.
    if (request.url.startsWith('/api/') && !reply.hasHeader('Cache-Control')) {
      reply.header('Cache-Control', 'no-store');
    }
  });
  return {
    startDraining: () => {
      draining = true;
    },
    draining: () => draining,
  };
}

/**
 * HTTP/1.1 requires exactly one Host header (RFC 9112 §3.2). Node keeps only the first of two, so
 * two that disagree could route differently in a proxy and here: refuse both shapes.
 */
function assertOneHost(raw: IncomingMessage): void {
  if (raw.httpVersion !== '1.1') return;
  let hosts = 0;
  for (let i = 0; i < raw.rawHeaders.length; i += 2) if (raw.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts !== 1) {
    throw problem('BAD_REQUEST', messages.hostHeaders(hosts));
  }
}

export function httpsRequired(): ProblemError {
  return problem('HTTPS_REQUIRED', messages.httpsRequired());
}
