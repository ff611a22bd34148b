import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError, problem, zodIssues } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { DbError, TransactionTimeoutError } from '../store/errors.js';
import { methodNotAllowed } from './method-not-allowed.js';

export { ProblemError };

/** Turns a database failure into what the client may know about it. */
function fromDbError(error: DbError): ProblemError {
  if (error.unavailable) return problem('SERVICE_UNAVAILABLE', messages.databaseUnavailable());
  if (error.failure === 'retryable') {
    return problem('SERVICE_UNAVAILABLE', 'A conflicting write was in progress; retry shortly.');
  }
  return problem('SERVER_ERROR', messages.unexpected());
}

type ValidationError = FastifyError & { validation: unknown; validationContext?: string };

/** Maps Fastify's own framework errors (parsing, limits) to our documented codes. */
function fromFastifyError(error: FastifyError): ProblemError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? problem('UNSUPPORTED_MEDIA_TYPE', messages.notJson())
        : problem('INVALID_BODY', 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('PAYLOAD_TOO_LARGE', messages.bodyTooLarge());
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem('INVALID_JSON', 'The request body is empty; a JSON document was expected.');
    default:
      return undefined;
  }
}

export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof DbError) return fromDbError(error);
  if (error instanceof TransactionTimeoutError) {
    return problem('SERVICE_UNAVAILABLE', 'The write took too long and was not applied; retry shortly.');
  }
  const fastifyError = error as ValidationError;
  const mapped = fastifyError?.code ? fromFastifyError(fastifyError) : undefined;
  if (mapped) return mapped;
  if (fastifyError?.statusCode === 400 && error instanceof SyntaxError) {
    // Never the parser's message: it quotes the body, and answers are kept in request records.
    return problem('INVALID_JSON', messages.invalidJson());
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
): void {
  app.setErrorHandler(async (error, request, reply) => {
    if (attribute && !request.attributed) await attribute(request);
    const answer = toProblem(error);
    request.problem = answer;
    if (answer.status >= 500) {
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
    const path = request.url.split('?')[0]!;
    const allowed = app.allowedMethods(path);
    const answer = allowed.length
      ? methodNotAllowed(request.method, allowed)
      : problem('NOT_FOUND', `No route ${request.method} ${path}.`);
    request.problem = answer;
    for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
    return reply.status(answer.status).send(answer.body(request.id));
  });
}
