import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError, problem, zodIssues } from '../domain/errors.js';
import { DbError, TransactionTimeoutError } from '../store/errors.js';
import { methodNotAllowed } from './method-not-allowed.js';

export { ProblemError };

/** Turns a database failure into what the client may know about it. */
function fromDbError(error: DbError): ProblemError {
  if (error.unavailable) return problem('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.');
  if (error.failure === 'retryable') {
    return problem('SERVICE_UNAVAILABLE', 'A conflicting write was in progress; retry shortly.');
  }
  return problem('SERVER_ERROR', 'An unexpected error occurred.');
}

type ValidationError = FastifyError & { validation: unknown; validationContext?: string };

/** Maps Fastify's own framework errors (parsing, limits) to our documented codes. */
function fromFastifyError(error: FastifyError): ProblemError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? problem('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be sent as Content-Type: application/json.')
        : problem('INVALID_BODY', 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('PAYLOAD_TOO_LARGE', 'The request body is larger than the 5 MiB limit.');
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
    return problem('INVALID_JSON', `The request body is not valid JSON: ${error.message}`);
  }
  return problem('SERVER_ERROR', 'An unexpected error occurred.');
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
  /** Runs before a path no route matched is answered (the app attributes it to a partner). */
  beforeNotFound?: (request: FastifyRequest) => Promise<void>,
): void {
  app.setErrorHandler((error, request, reply) => {
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

  app.setNotFoundHandler(beforeNotFound ? { preHandler: beforeNotFound } : {}, (request, reply) => {
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
