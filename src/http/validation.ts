import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { type Issue, type ProblemError, problem, zodIssues } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { declaredKeys, expandUnrecognized, unknownKeyIssues } from '../domain/unknown-keys.js';

/**
 * Request validation for every route with a Zod schema. Unlike the type provider's own compiler,
 * it refuses names the schema does not declare (a typo must never quietly change an answer) and
 * reports every issue of the request in one answer, unknown names included.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const part = httpPart === 'querystring' ? 'query' : (httpPart ?? 'body');
    const result = check(schema, data, part, [part]);
    return 'error' in result ? result : { value: result.value };
  };

/**
 * A body checked by the partner API's rules for bodies (as listing writes are): every issue in
 * one 422, unknown fields named with a suggestion, and paths that are the field names themselves
 * (`url`, `filter.status`), not prefixed with `body.`. For routes that validate in the handler.
 */
export function parseBody<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const result = check(schema, data, 'body', []);
  if ('error' in result) throw result.error;
  return result.value as z.output<S>;
}

function check(
  schema: z.ZodType,
  data: unknown,
  part: string,
  prefix: string[],
): { value: unknown } | { error: ProblemError } {
  if (part === 'body' && (data === null || typeof data !== 'object' || Array.isArray(data))) {
    if (data === undefined || data === null) {
      const parsed = schema.safeParse(data);
      if (parsed.success) return { value: parsed.data };
    }
    return { error: problem('INVALID_BODY', messages.bodyNotObject()) };
  }
  const kind = part === 'body' ? 'field' : 'parameter';
  const known = declaredKeys(schema);
  const unknown =
    known && data !== null && typeof data === 'object'
      ? unknownKeyIssues(data as Record<string, unknown>, known, kind, prefix)
      : [];
  const parsed = schema.safeParse(data);
  if (parsed.success && unknown.length === 0) return { value: parsed.data };
  // A strict schema reports its own unknown names too: each name once.
  const reported = new Set(unknown.map((i) => i.path));
  const own = parsed.success
    ? []
    : zodIssues({ issues: expandUnrecognized(parsed.error.issues, schema, kind) } as z.ZodError, prefix);
  const issues = [...unknown, ...own.filter((i) => !reported.has(i.path))];
  return { error: invalidInput(part, issues) };
}

/** The error for failed validation: 400 INVALID_QUERY for the URL, 422 VALIDATION_FAILED for a body. */
export function invalidInput(part: string, issues: Issue[]): ProblemError {
  if (part === 'body') return problem('VALIDATION_FAILED', messages.invalidInput('body', issues), issues);
  // The reference in the path has a code of its own (the same a bulk item's reference gets).
  const reference = issues.find((issue) => issue.path === 'params.externalReference');
  if (reference) return problem('INVALID_REFERENCE', messages.invalidReference(reference.message), issues);
  return problem('INVALID_QUERY', messages.invalidInput('query', issues), issues);
}

/**
 * For routes that declare no query parameters at all: any parameter is unknown. (Routes with a
 * query schema are checked by the compiler above.)
 */
export async function refuseUndeclaredQuery(request: FastifyRequest): Promise<void> {
  if (request.routeOptions.schema?.querystring) return;
  const query = request.query as Record<string, unknown> | undefined;
  if (!query || Object.keys(query).length === 0) return;
  throw invalidInput('query', unknownKeyIssues(query, [], 'parameter', ['query']));
}
