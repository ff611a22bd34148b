/**
 * Every error code the partner API answers with: its status, when it happens and what the client
 * should do. One list feeds the OpenAPI document (the `code` enum and each response's description)
 * and is checked against the service by the contract tests: a code not listed here fails them.
 */
export interface ErrorCode {
  status: number;
  when: string;
  action: string;
  /** Only on write operations (PUT, POST, DELETE). */
  writeOnly?: boolean;
}

export const ERROR_CODES = {
  INVALID_QUERY: {
    status: 400,
    when: 'A query or path parameter is malformed (page, pageSize, status, updatedSince, sort, a UUID, a boolean, a cursor).',
    action: 'Fix the parameter named in `issues`; do not retry unchanged.',
  },
  INVALID_JSON: {
    status: 400,
    when: 'The body is not valid JSON.',
    action: 'Send a JSON document; check your serializer.',
    writeOnly: true,
  },
  INVALID_BODY: {
    status: 400,
    when: 'The body is valid JSON but not the object (or array) the operation needs.',
    action: 'Send the shape shown for this operation.',
    writeOnly: true,
  },
  INVALID_REFERENCE: {
    status: 400,
    when: 'An externalReference is missing, longer than 128 characters, or has control characters or outer spaces.',
    action: 'Use a stable reference of 1 to 128 visible characters.',
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
    when: 'A filter, body or listing names a dealer profile outside your access scope (unknown ids get the same answer).',
    action: 'Use a dealer profile id or location code from GET /locations.',
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
    when: 'A body without `Content-Type: application/json`.',
    action: 'Set the content type.',
    writeOnly: true,
  },
  VALIDATION_FAILED: {
    status: 422,
    when: 'A listing or status failed validation; `issues` names every failing field with the rule it broke.',
    action: 'Fix the fields in `issues`; do not retry unchanged.',
    writeOnly: true,
  },
  RATE_LIMITED: {
    status: 429,
    when: 'Over your requests per minute, or too many failed authentications from your address.',
    action: 'Wait `Retry-After` seconds, then continue; `RateLimit-*` headers show your budget.',
  },
  BAD_REQUEST: {
    status: 400,
    when: 'The HTTP request itself is malformed (both Content-Length and Transfer-Encoding, a bad method, a control character in a header, a missing or doubled Host, broken %-encoding in the path). The connection is closed after the answer.',
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
} as const satisfies Record<string, ErrorCode>;

export type ErrorCodeName = keyof typeof ERROR_CODES;

/** The codes a response of this status may carry, for an operation that reads or writes. */
export function codesFor(status: number, write: boolean): ErrorCodeName[] {
  return (Object.entries(ERROR_CODES) as [ErrorCodeName, ErrorCode][])
    .filter(([, c]) => c.status === status && (write || !c.writeOnly))
    .map(([name]) => name);
}

/** A response description: which codes, when, and what to do about each. */
export function describeErrors(status: number, write: boolean): string {
  return codesFor(status, write)
    .map((name) => {
      const c: ErrorCode = ERROR_CODES[name];
      return `\`${name}\`: ${c.when} ${c.action}`;
    })
    .join('\n\n');
}
