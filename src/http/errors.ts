import type { FastifyError, FastifyInstance } from 'fastify';
import { ProblemError, zodIssues } from '../domain/errors.js';
import { DbError, TransactionTimeoutError } from '../store/errors.js';
import { methodNotAllowed } from './method-not-allowed.js';

export { ProblemError };

/** Turns a database failure into what the client may know about it. */
function fromDbError(error: DbError): ProblemError {
  // 57014 = statement timeout / canceled: the database is overloaded or the query ran away.
  if (error.unavailable || error.sqlState === '57014' || error.sqlState === '55P03') {
    return new ProblemError(503, 'SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.');
  }
  if (error.sqlState === '40001' || error.sqlState === '40P01') {
    return new ProblemError(
      503,
      'SERVICE_UNAVAILABLE',
      'A conflicting write was in progress; retry shortly.',
    );
  }
  return new ProblemError(500, 'SERVER_ERROR', 'An unexpected error occurred.');
}

type ValidationError = FastifyError & { validation: unknown; validationContext?: string };

/** Maps Fastify's own framework errors (parsing, limits) to our documented codes. */
function fromFastifyError(error: FastifyError): ProblemError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? new ProblemError(
            415,
            'UNSUPPORTED_MEDIA_TYPE',
            'Request bodies must be sent as Content-Type: application/json.',
          )
        : new ProblemError(400, 'INVALID_BODY', 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError(413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than the 5 MiB limit.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ProblemError(
        400,
        'INVALID_JSON',
        'The request body is empty; a JSON document was expected.',
      );
    default:
      return undefined;
  }
}

export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof DbError) return fromDbError(error);
  if (error instanceof TransactionTimeoutError) {
    return new ProblemError(
      503,
      'SERVICE_UNAVAILABLE',
      'The write took too long and was not applied; retry shortly.',
    );
  }
  const fastifyError = error as ValidationError;
  const mapped = fastifyError?.code ? fromFastifyError(fastifyError) : undefined;
  if (mapped) return mapped;
  if (fastifyError?.statusCode === 400 && error instanceof SyntaxError) {
    return new ProblemError(400, 'INVALID_JSON', `The request body is not valid JSON: ${error.message}`);
  }
  return new ProblemError(500, 'SERVER_ERROR', 'An unexpected error occurred.');
}

export { zodIssues };

declare module 'fastify' {
  interface FastifyRequest {
    /** The error this request was answered with, for its log line (code and issue count). */
    problem?: ProblemError;
  }
}

/** One error handler renders every error envelope; the HTTP status and body never disagree. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error);
    request.problem = problem;
    if (problem.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else if (!(error instanceof ProblemError)) {
      request.log.info(
        { err: { message: (error as Error).message, code: (error as FastifyError).code } },
        'request rejected',
      );
    }
    if (problem.status === 503) reply.header('Retry-After', '5');
    if (problem.status === 401) reply.header('WWW-Authenticate', 'Bearer');
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    return reply.status(problem.status).send(problem.body(request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = app.allowedMethods(path);
    const problem = allowed.length
      ? methodNotAllowed(request.method, allowed)
      : new ProblemError(404, 'NOT_FOUND', `No route ${request.method} ${path}.`);
    request.problem = problem;
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    return reply.status(problem.status).send(problem.body(request.id));
  });
}
