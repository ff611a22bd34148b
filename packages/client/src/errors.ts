import { rateLimitResetMs, retryAfterMs } from './retry.js';
import type { ErrorBody, Issue } from './types.js';

/**
 * An error answer of the service, from its envelope `{error: {code, message, requestId, issues?}}`;
 * also a request that never got an answer after its retries (`status` 0, code `NETWORK_ERROR`,
 * the last network error as `cause`), so a caller catches one class.
 */
export class ForecourtError extends Error {
  override readonly name = 'ForecourtError';
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The service's error code (RATE_LIMITED, VALIDATION_FAILED, ...), or NETWORK_ERROR. */
  readonly code: string;
  /** X-Request-Id of the failed request: quote it when you ask for help. */
  readonly requestId: string | undefined;
  /** Every failing input field, for validation errors. */
  readonly issues: Issue[] | undefined;
  /** The wait the answer asked for (Retry-After, or a 429's RateLimit-Reset), in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(
    status: number,
    body: { code: string; message: string; requestId?: string; issues?: Issue[] },
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(body.message, options);
    this.status = status;
    this.code = body.code;
    this.requestId = body.requestId;
    this.issues = body.issues;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** Reads an error answer. A body that is not our envelope (a proxy's HTML page) still yields a useful error. */
export function errorFromResponse(response: Response, body: unknown): ForecourtError {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const wait =
    retryAfterMs(response.headers) ??
    (response.status === 429 ? rateLimitResetMs(response.headers) : undefined);
  const options = wait === undefined ? undefined : { retryAfterMs: wait };
  const envelope = (body as { error?: Partial<ErrorBody> } | undefined)?.error;
  if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
    return new ForecourtError(
      response.status,
      {
        code: envelope.code,
        message: envelope.message,
        requestId: envelope.requestId ?? requestId,
        ...(envelope.issues ? { issues: envelope.issues } : {}),
      },
      options,
    );
  }
  return new ForecourtError(
    response.status,
    {
      code: `HTTP_${response.status}`,
      message: `HTTP ${response.status} ${response.statusText} without a Forecourt error body${
        typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''
      }`,
      requestId,
    },
    options,
  );
}
