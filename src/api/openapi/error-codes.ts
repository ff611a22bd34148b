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

/**
 * Codes only some operations can answer, by operationId (every other code may come from any
 * operation of its kind). TEST_MODE_ONLY: DELETE /test-data is the one operation of test mode only
 * (domain/test-data.ts). TEST_LIMIT_REACHED: only a write that can create a listing
 * (`assertTestRoom` in domain/listings/writes/write-batch.ts): PUT by reference and bulk upsert;
 * a PATCH never creates (404 for a reference you do not have), a status change or DELETE neither.
 */
export const ONLY_ON: Partial<Record<ErrorCodeName, readonly string[]>> = {
  TEST_MODE_ONLY: ['wipeTestData'],
  TEST_LIMIT_REACHED: ['upsertListing', 'bulkUpsertListings'],
};

/** The codes a response of this status may carry on this operation (which reads or writes). */
export function codesFor(status: number, write: boolean, operationId: string): ErrorCodeName[] {
  return (Object.entries(ERROR_CODES) as [ErrorCodeName, ProblemKind][])
    .filter(([, c]) => c.status === status && (write || !c.writeOnly))
    .filter(([name]) => ONLY_ON[name]?.includes(operationId) ?? true)
    .map(([name]) => name);
}

/** A response description: which codes, when, and what to do about each. */
export function describeErrors(status: number, write: boolean, operationId: string): string {
  return codesFor(status, write, operationId)
    .map((name) => {
      const c = ERROR_CODES[name];
      return `\`${name}\`: ${c.when} ${c.action}`;
    })
    .join('\n\n');
}
