import { z } from 'zod';
import { ERROR_CODES } from '../openapi/error-codes.js';

export {
  dealerSchema,
  dealerSummarySchema,
  listingSchema,
  locationSchema,
  partnerMetaSchema,
} from './resources.js';

export const errorResponse = z
  .object({
    error: z.object({
      // Documented as an enum; serialized as any string, so an unlisted code is caught by the
      // contract tests rather than turned into a 500.
      code: z.string().meta({ enum: Object.keys(ERROR_CODES) }),
      message: z.string(),
      requestId: z.string(),
      issues: z
        .array(z.object({ path: z.string(), message: z.string(), code: z.string() }))
        .optional()
        .describe('Every input that failed validation, at most 100 (see issueCount).'),
      issueCount: z
        .number()
        .int()
        .optional()
        .describe('Present when there were more issues than the 100 listed: how many there were.'),
    }),
  })
  // Not `Error`: generated TypeScript would shadow the global Error class with it.
  .meta({ id: 'ErrorResponse' });

export const paginationSchema = z.object({
  page: z.number().int(),
  pageSize: z.number().int(),
  totalItems: z.number().int(),
  totalPages: z.number().int(),
  nextCursor: z
    .string()
    .optional()
    .describe(
      'With sort=updatedAt: pass as cursor= to continue strictly after this page. Store the last one to resume later.',
    ),
  hasMore: z
    .boolean()
    .optional()
    .describe(
      'With sort=updatedAt: false only when no listing of the filters lies after nextCursor. true with an unchanged nextCursor: a write that began earlier is still open; ask again shortly.',
    ),
});

/** Responses every partner route may give besides its success. */
export const partnerErrors = {
  400: errorResponse,
  401: errorResponse,
  403: errorResponse,
  404: errorResponse,
  429: errorResponse,
  500: errorResponse,
  503: errorResponse,
};
