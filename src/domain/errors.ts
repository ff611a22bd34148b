import type { z } from 'zod';

/**
 * Every error code the service answers with: its HTTP status, when it happens and what the client
 * should do. The one table that errors are built from (`problem('NOT_FOUND', message)` takes its
 * status here), that the OpenAPI document describes, and that the contract tests check the
 * service against: a code not listed here cannot be raised.
 */
export interface ProblemKind {
  status: number;
  when: string;
  action: string;
  /** Only on write operations (PUT, POST, DELETE). */
  writeOnly?: boolean;
  /** Only on the operator API (/api/admin): not part of the partner contract. */
  adminOnly?: boolean;
}

export const PROBLEMS = {
  INVALID_QUERY: {
    status: 400,
    when: 'A query or path parameter is malformed (page, pageSize, status, updatedSince, sort, a UUID, a boolean, a cursor), or a query name or value holds U+0000 or bytes that are not UTF-8.',
    action: 'Fix the parameter named in `issues`; do not retry unchanged.',
  },
  INVALID_JSON: {
    status: 400,
    when: 'The body is not valid JSON, or its bytes are not UTF-8 (the message says where).',
    action: 'Send a JSON document; check your serializer.',
    writeOnly: true,
  },
  INVALID_BODY: {
    status: 400,
    when: 'The body is valid JSON but not the object (or array) the operation needs, or past a limit of its shape (1,000 names in one object, 10,000 elements in one array, 64 levels of nesting).',
    action: 'Send the shape shown for this operation.',
    writeOnly: true,
  },
  INVALID_REFERENCE: {
    status: 400,
    when: 'An externalReference is missing, longer than 128 characters, or has control characters or outer spaces.',
    action: 'Use a stable reference of 1 to 128 visible characters.',
    writeOnly: true,
  },
  INVALID_HEADER: {
    status: 400,
    when: 'A request header the operation reads is malformed: an If-Match that is not `*` or a comma-separated list of entity tags, each quoted (`"…"` or `W/"…"`, RFC 9110), such as an ETag sent without its quotes.',
    action:
      'Send the header as the message says (an ETag exactly as received, quotes included); do not retry unchanged.',
    writeOnly: true,
  },
  EMPTY_PAYLOAD: {
    status: 400,
    when: 'A bulk upsert with no items.',
    action: 'Send 1 to 100 items.',
    writeOnly: true,
  },
  TOO_MANY_ITEMS: {
    status: 400,
    when: 'A bulk upsert with more than 100 items.',
    action: 'Split the feed into batches of 100.',
    writeOnly: true,
  },
  UNAUTHORIZED: {
    status: 401,
    when: 'No API secret, or a malformed, unknown, rotated-away or disabled one.',
    action:
      'Send `Authorization: Bearer <secret>`; ask the marketplace operator for a new secret if it was rotated.',
  },
  HTTPS_REQUIRED: {
    status: 403,
    when: 'The request came over plain HTTP.',
    action: 'Use https:// (and treat the secret as exposed if it was sent in clear).',
  },
  INSUFFICIENT_SCOPE: {
    status: 403,
    when: 'The secret lacks the scope this operation needs (the message names it).',
    action: 'Ask the operator for the scope; do not retry.',
  },
  PROFILE_FORBIDDEN: {
    status: 403,
    when: 'A filter, body or listing names a dealer profile outside your access scope (unknown ids get the same answer; a global partner writing with an unknown one gets 422 VALIDATION_FAILED).',
    action: 'Use a dealer profile id or location code from GET /locations.',
  },
  TEST_MODE_ONLY: {
    status: 403,
    when: 'An operation of test mode only (DELETE /test-data) sent with a live secret.',
    action: 'Send it with your test secret (`fc_test_…`); live data is never wiped this way.',
    writeOnly: true,
  },
  NOT_FOUND: {
    status: 404,
    when: 'Unknown path; a listing or location that does not exist or is outside your access scope; a reference you do not have.',
    action: 'Check the id or reference; ids of other partners are never confirmed.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    when: 'A known path with the wrong method; `Allow` lists the right ones.',
    action: 'Use a method from `Allow`.',
    writeOnly: true,
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    when: 'A body over 5 MiB.',
    action: 'Send fewer items per request.',
    writeOnly: true,
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    when: 'A body without `Content-Type: application/json`, or declaring a charset other than UTF-8.',
    action: 'Set the content type; send the body encoded as UTF-8.',
    writeOnly: true,
  },
  VALIDATION_FAILED: {
    status: 422,
    when: 'A listing or status failed validation; `issues` names every failing field with the rule it broke.',
    action: 'Fix the fields in `issues`; do not retry unchanged.',
    writeOnly: true,
  },
  TEST_LIMIT_REACHED: {
    status: 422,
    when: 'A write in test mode would create more test listings than a partner may hold (10,000); nothing of the request was written.',
    action:
      'Wipe your test data (DELETE /test-data) or update existing test listings; live secrets have no such limit.',
    writeOnly: true,
  },
  PRECONDITION_FAILED: {
    status: 412,
    when: "Your If-Match names a version of the listing that is no longer the current one (another write came first), or If-Match is set on a PUT of a reference you do not have yet, or on a bulk upsert (which takes none). The answer's `ETag` header holds the current version when there is one.",
    action:
      'Read the listing again (GET /listings/{id}, or the ETag of this answer), apply your change to what is there now, and send it with the new ETag.',
    writeOnly: true,
  },
  RATE_LIMITED: {
    status: 429,
    when: 'Over your requests per minute, or too many failed authentications from your address.',
    action: 'Wait `Retry-After` seconds, then continue; `RateLimit-*` headers show your budget.',
  },
  BAD_REQUEST: {
    status: 400,
    when: 'The HTTP request itself is malformed (both Content-Length and Transfer-Encoding, a bad method, a control character in a header, a missing or doubled Host: the connection is closed after the answer), or its path has broken %-encoding, U+0000 or a character that is not percent-encoded.',
    action: 'Fix your HTTP client or proxy; do not retry unchanged.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    when: 'The request (headers or body) did not arrive in time. The connection is closed after the answer.',
    action: 'Retry; check your network or proxy if it repeats.',
  },
  URI_TOO_LONG: {
    status: 414,
    when: 'The request line (path and query string) is longer than the service reads (16 KiB with the headers). The connection is closed after the answer.',
    action: 'Shorten the query; no filter needs that much.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    when: 'The request headers are larger than 16 KiB in all. The connection is closed after the answer.',
    action: 'Send fewer or smaller headers.',
  },
  CONFLICT: {
    status: 409,
    when: 'Resuming (or enabling) a webhook endpoint the operator disabled: only the operator enables it again. In the operator API: a dealer location code already in use (codes are case-insensitive).',
    action:
      'Ask the operator why they disabled the endpoint (its disabledReason says); for a dealer code, choose another or update the profile that has it.',
    writeOnly: true,
  },
  SERVER_ERROR: {
    status: 500,
    when: 'Our fault.',
    action: 'Retry later with backoff; quote `requestId` to the operator, who finds the detail in our log.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    when: 'The database is unavailable or overloaded, a conflicting write was in progress, or the instance is restarting. Nothing was written.',
    action: 'Retry after `Retry-After` seconds; writes are idempotent upserts, so a retry is safe.',
  },
} as const satisfies Record<string, ProblemKind>;

export type ProblemCode = keyof typeof PROBLEMS;

export interface Issue {
  path: string;
  message: string;
  code: string;
}

/**
 * An answer lists at most this many issues (docs/contract.md#the-error-body); when there were more,
 * `issueCount` gives the total. A body built to produce 100,000 issues must not produce a 10 MB
 * answer.
 */
export const MAX_ISSUES = 100;

/** `issues` as an answer carries them: the first MAX_ISSUES, and the total when more. */
export function issuesPart(issues: Issue[] | undefined): { issues?: Issue[]; issueCount?: number } {
  if (!issues) return {};
  if (issues.length <= MAX_ISSUES) return { issues };
  return { issues: issues.slice(0, MAX_ISSUES), issueCount: issues.length };
}

/**
 * The one error type of the service: a stable machine-readable code, the HTTP status the table
 * gives it and a message for humans. Thrown by any layer; rendered in one place (http/errors.ts).
 */
export class ProblemError extends Error {
  readonly headers: Record<string, string> = {};
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    message: string,
    readonly issues?: Issue[],
  ) {
    super(message);
    this.name = 'ProblemError';
    this.status = PROBLEMS[code].status;
  }

  body(requestId: string) {
    return {
      error: {
        code: this.code,
        message: this.message,
        requestId,
        ...issuesPart(this.issues),
      },
    };
  }
}

/** An error of the table: `problem('PROFILE_FORBIDDEN', 'Dealer profile … is not in …')`. */
export const problem = (code: ProblemCode, message: string, issues?: Issue[]) =>
  new ProblemError(code, message, issues);

export function zodIssues(error: z.ZodError, prefix: readonly (string | number)[] = []): Issue[] {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path].map(String).join('.') || '(root)',
    message: issue.message,
    code: issueCode(issue),
  }));
}

/** An issue's code: our own where we set one (unknown_field, unknown_parameter), else Zod's. */
function issueCode(issue: z.core.$ZodIssue): string {
  const own = (issue as { params?: { code?: unknown } }).params?.code;
  return typeof own === 'string' ? own : issue.code;
}

/** A refusal about one field: "path: message", and the same as its one issue. */
export const fieldProblem = (code: ProblemCode, path: string, message: string, issueCode = 'invalid') =>
  problem(code, `${path}: ${message}`, [{ path, message, code: issueCode }]);

export const notFound = (message: string) => problem('NOT_FOUND', message);
export const profileForbidden = (message: string) => problem('PROFILE_FORBIDDEN', message);
