import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import net from 'node:net';
import { answerClientError } from './client-error.js';
import { answerConnect } from './method-not-allowed.js';
import { onePerConnection } from './pipelining.js';

/** The first byte of a TLS ClientHello record (content type "handshake"). */
const TLS_HANDSHAKE = 0x16;

/** How often Node looks for connections past their timeouts (its default is every 30 s). */
export const checkingInterval = (headersTimeoutMs: number) => Math.min(1_000, headersTimeoutMs / 4);

export interface Limits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * One port that speaks TLS and still answers a client who forgot it. Each new connection's first
 * byte says which: a TLS handshake goes to the HTTPS server; anything else is plain HTTP and goes
 * to `plainHandler`, which refuses it (or, behind a trusted proxy, serves it: TLS ended there).
 * Detecting it on the socket means a plain request never reaches a route and never sees data.
 */
export function createDualListener(
  https: HttpsServer,
  plainHandler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: Limits,
): DualListener {
  const plain = createHttpServer(
    { connectionsCheckingInterval: checkingInterval(limits.headersTimeoutMs), requireHostHeader: false },
    // As on HTTPS (https-server.ts): behind a trusted proxy, its connections pipeline too.
    onePerConnection(plainHandler, limits.headersTimeoutMs / 2),
  );
  plain.on('clientError', answerClientError);
  plain.on('connect', answerConnect(plainHandler));
  for (const server of [https, plain]) {
    server.headersTimeout = limits.headersTimeoutMs;
    server.requestTimeout = limits.requestTimeoutMs;
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  }
  // Nagle's algorithm off, as Node's own HTTP servers set it on the sockets they accept (their
  // `noDelay`, which a socket handed over by 'connection' never gets): an answer written in several
  // pieces (a compressed page leaves zlib's stream in chunks) otherwise waits for the client's
  // delayed ACK before its last piece, about 40 ms a page (docs/benchmarks.md, compression).
  const front = net.createServer({ noDelay: true }, (socket) => {
    // A client that connects and sends nothing is dropped after the header timeout.
    socket.setTimeout(limits.headersTimeoutMs, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.once('data', (head: Buffer) => {
      socket.pause();
      socket.unshift(head);
      socket.setTimeout(0);
      (head[0] === TLS_HANDSHAKE ? https : plain).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  // The HTTP servers never listen themselves, so they never see 'listening'. Node starts its
  // connection tracking there, and that tracking is what enforces headersTimeout and
  // requestTimeout (slow clients) and lets close() drop idle keep-alive connections.
  front.on('listening', () => {
    https.emit('listening');
    plain.emit('listening');
  });
  const dual = front as DualListener;
  dual.shutdown = () =>
    new Promise<void>((resolve) => {
      front.close(() => resolve());
      // close() on the inner servers drops idle keep-alive connections and stops their timers;
      // busy connections finish their request first.
      https.close();
      plain.close();
      https.closeIdleConnections();
      plain.closeIdleConnections();
    });
  return dual;
}

type DualListener = net.Server & {
  /** Stops accepting, lets in-flight requests finish, and resolves when every connection is gone. */
  shutdown(): Promise<void>;
};
