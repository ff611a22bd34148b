import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { type ProblemCode, ProblemError, problem, zodIssues } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { DbError, TransactionTimeoutError } from '../store/errors.js';
import { methodNotAllowed } from './method-not-allowed.js';
import type { DatabaseOutages } from './outage.js';

export { ProblemError };

/** Turns a database failure into what the client may know about it. */
function fromDbError(error: DbError): ProblemError {
  if (error.unavailable) return problem('SERVICE_UNAVAILABLE', messages.databaseUnavailable());
  if (error.failure === 'retryable') {
    return problem('SERVICE_UNAVAILABLE', messages.conflictingWrite());
  }
  return problem('SERVER_ERROR', messages.unexpected());
}

type ValidationError = FastifyError & { validation: unknown; validationContext?: string };

/** Maps Fastify's own framework errors (parsing, limits) to our documented codes. */
function fromFastifyError(error: FastifyError, method: string): ProblemError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem('UNSUPPORTED_MEDIA_TYPE', messages.notJson(method));
    case 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE':
      return problem('UNSUPPORTED_MEDIA_TYPE', messages.missingContentType(method));
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem('INVALID_BODY', messages.contentLengthMismatch());
    case 'FST_ERR_ROUTE_MISSING_CONTENT':
      return problem('INVALID_BODY', messages.missingBody(method));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('PAYLOAD_TOO_LARGE', messages.bodyTooLarge());
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem('INVALID_JSON', messages.emptyBody());
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problem('INVALID_JSON', messages.invalidJson());
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return problem('URI_TOO_LONG', messages.pathSegmentTooLong());
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_INVALID_URL':
      return problem('BAD_REQUEST', messages.brokenPercentEncoding());
    default:
      return undefined;
  }
}

/**
 * The documented code of any other 4xx the framework (or a plugin) raises, by its status: a
 * client's mistake is never a SERVER_ERROR. Statuses with no code of their own are BAD_REQUEST.
 */
const CODE_OF_STATUS: Partial<Record<number, ProblemCode>> = {
  400: 'BAD_REQUEST',
  404: 'NOT_FOUND',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'HEADERS_TOO_LARGE',
};

/** A 4xx status carried by an error that is not ours (Fastify's and its plugins' errors carry one). */
function clientStatusOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

export function toProblem(error: unknown, method = ''): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof DbError) return fromDbError(error);
  if (error instanceof TransactionTimeoutError) {
    return problem('SERVICE_UNAVAILABLE', messages.writeTooLong());
  }
  const fastifyError = error as ValidationError;
  const mapped = fastifyError?.code ? fromFastifyError(fastifyError, method) : undefined;
  if (mapped) return mapped;
  const status = clientStatusOf(error);
  if (status === 400 && error instanceof SyntaxError) {
    // Never the parser's message: it quotes the body, and answers are kept in request records.
    return problem('INVALID_JSON', messages.invalidJson());
  }
  if (status !== undefined) {
    // Never the framework's own words either: some quote the URL or the body.
    return problem(CODE_OF_STATUS[status] ?? 'BAD_REQUEST', messages.requestRefused(status));
  }
  return problem('SERVER_ERROR', messages.unexpected());
}

export { zodIssues };

declare module 'fastify' {
  interface FastifyRequest {
    /** The error this request was answered with, for its log line (code and issue count). */
    problem?: ProblemError;
  }
}

/** One error handler renders every error envelope; the HTTP status and body never disagree. */
export function registerErrorHandling(
  app: FastifyInstance,
  /**
   * Runs before a path no route matched is answered, and before an error of a request that no
   * route's authentication has seen yet (a URL refused at the door): the app attributes it to a
   * partner, so the partner finds it among its own failed requests.
   */
  attribute?: (request: FastifyRequest) => Promise<void>,
  /** Told of each request refused because the database could not do the work (outage.ts). */
  outages?: Pick<DatabaseOutages, 'refused'>,
): void {
  /**
   * What a request no route matched is told: 405 with `Allow` on a path that is routed for other
   * methods, else 404. The path is named only up to a short bound: it is the client's text, and
   * answers are kept in request records.
   */
  function unrouted(request: FastifyRequest): ProblemError {
    const path = request.url.split('?')[0]!;
    const allowed = app.allowedMethods(path);
    return allowed.length
      ? methodNotAllowed(request.method, allowed)
      : problem('NOT_FOUND', messages.noRoute(request.method, path));
  }

  app.setErrorHandler(async (error, request, reply) => {
    if (attribute && !request.attributed) await attribute(request);
    // A request no route matched fails in Fastify's body handling before the not-found handler
    // runs (QUERY with no Content-Type, a body Fastify will not parse): it is told what the
    // not-found handler tells, not what its body lacked. Our own refusals at the door still win.
    const answer =
      request.is404 && !(error instanceof ProblemError) && clientStatusOf(error) !== undefined
        ? unrouted(request)
        : toProblem(error, request.method);
    request.problem = answer;
    if (error instanceof DbError && error.unavailable) {
      // Expected while the database is away: one line when it goes and one when it is back
      // (outage.ts), not a stack per request.
      outages?.refused(error);
      request.log.debug({ cause: error.message }, 'request refused: the database is unavailable');
    } else if (answer.status === 503) {
      // A write that conflicted or ran out of time: the client retries; no stack to read.
      request.log.warn({ cause: (error as Error).message }, 'request refused: retry');
    } else if (answer.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else if (!(error instanceof ProblemError)) {
      request.log.info(
        { err: { message: (error as Error).message, code: (error as FastifyError).code } },
        'request rejected',
      );
    }
    if (answer.status === 503) reply.header('Retry-After', '5');
    if (answer.status === 401) reply.header('WWW-Authenticate', 'Bearer');
    for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
    return reply.status(answer.status).send(answer.body(request.id));
  });

  app.setNotFoundHandler(attribute ? { preHandler: attribute } : {}, (request, reply) => {
    const answer = unrouted(request);
    request.problem = answer;
    for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
    return reply.status(answer.status).send(answer.body(request.id));
  });
}
