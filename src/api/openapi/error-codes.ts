import { PROBLEMS, type ProblemCode, type ProblemKind } from '../../domain/errors.js';

/**
 * The error table (domain/errors.ts) as the OpenAPI document shows it: the codes each response
 * status may carry on a partner operation, with when each happens and what to do.
 */
export type ErrorCodeName = ProblemCode;

/** The partner API's codes (the operator API's own are left out of the partner contract). */
export const ERROR_CODES = Object.fromEntries(
  Object.entries(PROBLEMS).filter(([, kind]) => !(kind as ProblemKind).adminOnly),
) as Record<ErrorCodeName, ProblemKind>;

/** The codes a response of this status may carry, for an operation that reads or writes. */
function codesFor(status: number, write: boolean): ErrorCodeName[] {
  return (Object.entries(ERROR_CODES) as [ErrorCodeName, ProblemKind][])
    .filter(([, c]) => c.status === status && (write || !c.writeOnly))
    .map(([name]) => name);
}

/** A response description: which codes, when, and what to do about each. */
export function describeErrors(status: number, write: boolean): string {
  return codesFor(status, write)
    .map((name) => {
      const c = ERROR_CODES[name];
      return `\`${name}\`: ${c.when} ${c.action}`;
    })
    .join('\n\n');
}
