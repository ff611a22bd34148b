import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ProblemError, problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';

/**
 * Refusals below the router: requests Node's HTTP parser cannot read, and URLs the router cannot
 * decode. Each gets our envelope and an X-Request-Id like every other answer
 * (docs/contract.md#protocol-level-refusals), and the answer is written before the connection
 * closes.
 *
 * Why not Fastify's default handler: it writes its answer and destroys the socket at once. On a
 * TLS connection handed over by our first-byte listener (listener.ts) the destroy discarded the
 * encrypted write: clients saw the connection close with no answer at all. Ending the socket
 * flushes the answer first; a timer destroys it if the client never reads.
 */

/** How long a refused client has to read its answer before the socket is destroyed. */
const LINGER_MS = 2_000;

const LONG_LINE = Symbol('request line longer than the first read');

/**
 * Marks a connection whose first data starts a request line that does not end within it: the
 * parser's error then tells only "header overflow", and this tells 414 from 431. Only the first
 * read is looked at (a later request on a kept-alive connection that overflows is called 431).
 */
export function watchRequestLine(socket: Duplex): void {
  socket.once('data', (chunk: Buffer) => {
    const head = chunk.subarray(0, 16).toString('latin1');
    if (/^[A-Z]+ /.test(head) && chunk.indexOf('\r\n') === -1) {
      (socket as unknown as Record<typeof LONG_LINE, boolean>)[LONG_LINE] = true;
    }
  });
}

/** What a parser error means for the client, by Node's error code. */
function classify(error: NodeJS.ErrnoException, socket: Duplex): ProblemError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      // Node counts the request line within its header limit; the URL was what was too long
      // when the connection's first request line never ended (see watchRequestLine).
      const longLine = (socket as Partial<Record<typeof LONG_LINE, boolean>>)[LONG_LINE] === true;
      return longLine
        ? problem('URI_TOO_LONG', messages.uriTooLong())
        : problem('HEADERS_TOO_LARGE', messages.headersTooLarge());
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return problem('REQUEST_TIMEOUT', messages.requestTimeout());
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return badRequest(messages.lengthAndChunked());
    case 'HPE_INVALID_METHOD':
      return badRequest('The request method is not a valid HTTP method.');
    case 'HPE_INVALID_HEADER_TOKEN':
      return badRequest('A request header has an invalid name or a control character in its value.');
    case 'HPE_INVALID_CONTENT_LENGTH':
      return badRequest('The Content-Length header is not a valid length.');
    default:
      return badRequest('The HTTP request is malformed.');
  }
}

const badRequest = (message: string) => problem('BAD_REQUEST', message);

/** Server 'clientError' handler: a complete HTTP/1.1 answer, then a graceful close. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection, or one already gone, has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = classify(error, socket);
  const requestId = randomUUID();
  const body = JSON.stringify(answer.body(requestId));
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Cache-Control: no-store',
    'Connection: close',
  ].join('\r\n');
  if (socket.writable) socket.end(`${head}\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * Fastify's `frameworkErrors`: a path whose %-encoding is broken, or a path parameter longer
 * than the router keeps. Answered through the reply, so hooks (X-Request-Id, logs) apply.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const answer =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? problem('URI_TOO_LONG', messages.pathSegmentTooLong())
      : badRequest('The request path is not valid: broken %-encoding.');
  request.problem = answer;
  return reply
    .status(answer.status)
    .header('X-Request-Id', request.id)
    .header('Cache-Control', 'no-store')
    .header('Connection', 'close')
    .send(answer.body(request.id));
}
