import type { z } from 'zod';

export interface Issue {
  path: string;
  message: string;
  code: string;
}

/**
 * The one error type of the service: a stable machine-readable code, the HTTP status it travels
 * with and a message for humans. Thrown by any layer; rendered in one place (http/errors.ts).
 */
export class ProblemError extends Error {
  readonly headers: Record<string, string> = {};

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: Issue[],
  ) {
    super(message);
    this.name = 'ProblemError';
  }

  body(requestId: string) {
    return {
      error: {
        code: this.code,
        message: this.message,
        requestId,
        ...(this.issues ? { issues: this.issues } : {}),
      },
    };
  }
}

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

export const notFound = (message: string) => new ProblemError(404, 'NOT_FOUND', message);
export const profileForbidden = (message: string) => new ProblemError(403, 'PROFILE_FORBIDDEN', message);
