import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import { watchRequestLine } from './client-error.js';
import { checkingInterval } from './listener.js';
import { onePerConnection } from './pipelining.js';
import type { TlsMaterial } from './tls.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Fastify's serverFactory for the service: HTTPS with TLS 1.2 at least, our own Host check, Node's
 * timeout checks often enough for HEADERS_TIMEOUT_MS, and one request of a connection served at a
 * time (pipelining.ts). `keep` is given Fastify's handler, which plain-HTTP connections forwarded
 * by a trusted proxy are handed to (runtime.ts).
 */
export function httpsServerFactory(
  tls: TlsMaterial,
  headersTimeoutMs: number,
  keep: (handler: Handler) => void,
) {
  return (fastifyHandler: Handler) => {
    keep(fastifyHandler);
    const server = https.createServer(
      {
        key: tls.key,
        cert: tls.cert,
        minVersion: 'TLSv1.2',
        // A missing Host is refused by our own hook (http/door.ts) with the envelope; Node's own
        // check answers a bare 400.
        requireHostHeader: false,
        // How often Node checks for clients past the header and request timeouts; its default
        // (30 s) would let a slow client hold a connection three times HEADERS_TIMEOUT_MS.
        connectionsCheckingInterval: checkingInterval(headersTimeoutMs),
      },
      // One request of a connection in the service at a time: pipelining holds no one else up.
      onePerConnection(fastifyHandler, headersTimeoutMs / 2),
    );
    server.on('secureConnection', watchRequestLine);
    return server;
  };
}
