import type { Issue } from '../../domain/errors.js';
import { priceIssue } from '../../domain/listings/checks.js';
import { LISTING_ID, REFERENCE } from '../../domain/listings/example.js';
import { referenceRule } from '../../domain/listings/input.js';
import { messages } from '../../domain/messages.js';
import { unknownNameMessage } from '../../domain/suggest.js';
import { codesFor, type ErrorCodeName } from './error-codes.js';

/**
 * One realistic refusal per error code, its message made by the factory the service's code calls
 * (domain/messages.ts), so an example cannot drift from what the service says;
 * test/unit/messages.test.ts checks each against the code that throws it.
 */

type Example = { summary: string; value: unknown };

const REQUEST_ID = '6f1c2b0e-8d4a-4e7b-9c1d-2a3b4c5d6e7f';

/** The body the INVALID_JSON example was refused for (a comma missing after 21950). */
export const BROKEN_JSON = '{"title": "Golf", "price": 21950 "year": 2021}';

const queryIssues: Issue[] = [
  {
    path: 'query.stauts',
    message: unknownNameMessage('parameter', 'stauts', ['status', 'sort']),
    code: 'unknown_parameter',
  },
  { path: 'query.pageSize', message: messages.positiveInteger(), code: 'custom' },
];

const listingIssues: Issue[] = [
  {
    path: 'milage',
    message: unknownNameMessage('field', 'milage', ['mileage', 'make']),
    code: 'unknown_field',
  },
  // Not the year: its bound is next year, and the document must not change each 1 January.
  { path: 'mileage', message: messages.between(0, 2_000_000), code: 'too_big' },
  priceIssue('active'),
];

export const ERROR_EXAMPLES: Record<ErrorCodeName, { summary: string; message: string; issues?: Issue[] }> = {
  INVALID_QUERY: {
    summary: 'A misspelt query parameter',
    message: messages.invalidInput('query', queryIssues),
    issues: queryIssues,
  },
  INVALID_JSON: {
    summary: 'A body that is not JSON',
    message: messages.invalidJson(
      "expected ',' or '}' after property value at line 1, column 34 (character 33)",
    ),
  },
  INVALID_BODY: { summary: 'Not the object the operation needs', message: messages.bodyNotObject() },
  INVALID_REFERENCE: {
    summary: 'A reference with an outer space',
    message: messages.invalidReference(referenceRule),
  },
  INVALID_HEADER: {
    summary: 'An ETag sent without its quotes',
    message: messages.malformedIfMatch('h3Kq0m2bXl9Zc1TqYw8fRk4vD0a'),
  },
  EMPTY_PAYLOAD: { summary: 'A bulk request without items', message: messages.emptyBulk() },
  TOO_MANY_ITEMS: { summary: 'A bulk request over 100 items', message: messages.tooManyItems(250, 100) },
  UNAUTHORIZED: { summary: 'An unknown or rotated secret', message: messages.secretNotRecognized() },
  HTTPS_REQUIRED: { summary: 'Plain HTTP', message: messages.httpsRequired() },
  INSUFFICIENT_SCOPE: {
    summary: 'A read-only secret writing',
    message: messages.insufficientScope(['write:listings'], false, ['read:listings', 'read:locations']),
  },
  PROFILE_FORBIDDEN: {
    summary: 'A dealer outside your scope',
    message: messages.locationCodeNotInScope('DUPONT-LIEGE'),
  },
  TEST_MODE_ONLY: { summary: 'Wiping test data with a live secret', message: messages.testModeOnly() },
  TEST_LIMIT_REACHED: {
    summary: 'A test write past the limit',
    message: messages.testLimitReached(10_000, 9_990, 25),
  },
  NOT_FOUND: { summary: 'Unknown or outside your scope', message: messages.listingNotFound(LISTING_ID) },
  METHOD_NOT_ALLOWED: {
    summary: 'A method this path does not have',
    message: messages.methodNotAllowed('PATCH', ['GET', 'PUT', 'DELETE']),
  },
  PAYLOAD_TOO_LARGE: { summary: 'A body over 5 MiB', message: messages.bodyTooLarge() },
  UNSUPPORTED_MEDIA_TYPE: { summary: 'Not JSON', message: messages.notJson('PUT') },
  VALIDATION_FAILED: {
    summary: 'A misspelt field, next to the other issues of the listing',
    message: messages.invalidListing(listingIssues),
    issues: listingIssues,
  },
  RATE_LIMITED: { summary: 'Over your requests per minute', message: messages.rateLimited(600, 12) },
  BAD_REQUEST: { summary: 'A malformed HTTP request', message: messages.lengthAndChunked() },
  REQUEST_TIMEOUT: { summary: 'Too slow to arrive', message: messages.requestTimeout() },
  URI_TOO_LONG: { summary: 'A request line over 16 KiB', message: messages.uriTooLong() },
  HEADERS_TOO_LARGE: { summary: 'Headers over 16 KiB', message: messages.headersTooLarge() },
  SERVER_ERROR: { summary: 'Our fault', message: messages.unexpected() },
  SERVICE_UNAVAILABLE: { summary: 'Retry shortly', message: messages.databaseUnavailable() },
  CONFLICT: {
    summary: 'The operator disabled this webhook endpoint',
    message: messages.endpointHeldByOperator(
      'disabled by the operator: answers 200 to everything without storing',
    ),
  },
  PRECONDITION_FAILED: {
    summary: 'Another write came first',
    message: messages.staleIfMatch(REFERENCE, '"h3Kq0m2bXl9Zc1TqYw8fRk4vD0a"'),
  },
};

/** The examples of one error status: one per code that status may carry on this operation. */
export function errorExamples(status: number, write: boolean, operationId: string): Record<string, Example> {
  const entries = codesFor(status, write, operationId).map((code) => {
    const { summary, message, issues } = ERROR_EXAMPLES[code];
    return [
      code,
      {
        summary: `${code}: ${summary}`,
        value: { error: { code, message, requestId: REQUEST_ID, ...(issues ? { issues } : {}) } },
      },
    ];
  });
  return Object.fromEntries(entries);
}
