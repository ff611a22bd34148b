import { z } from 'zod';
import { caseInsensitive } from '../../domain/listings/field-types.js';
import { DEFAULT_RECORD_PAGE, MAX_RECORD_PAGE, USAGE_WINDOWS } from '../../domain/request-records/reads.js';
import { ERROR_CODES } from '../openapi/error-codes.js';
import { cursorParam, DATE_TIME_WORDS, dateTimeParam, positiveIntParam, textParam } from './query.js';

/** A failed request as its partner sees it (GET /requests). */
export const requestRecordSchema = z
  .object({
    requestId: z.string().describe('The X-Request-Id of the answer (yours, when you sent one).'),
    at: z.string().describe('When the request arrived.'),
    method: z.string(),
    route: z
      .string()
      .describe(
        'The operation as this document writes its path (/listings/{listing}); for a path no operation has, the path as sent (its first 200 characters).',
      ),
    status: z.number().int(),
    code: z.string().nullable().describe('The error code of the answer.'),
    message: z.string().nullable().describe('The error message of the answer.'),
    issues: z
      .array(z.object({ path: z.string(), message: z.string(), code: z.string() }))
      .describe('The first 10 issues of the answer.'),
    issueCount: z.number().int().describe('How many issues the answer had (issues holds the first 10).'),
    durationMs: z.number(),
    key: z
      .enum(['current', 'previous', 'retired'])
      .nullable()
      .describe(
        'Which of your secrets was sent: the current one, the previous one during its grace period, or one a rotation retired (refused with 401). null: none identified you.',
      ),
    test: z.boolean().describe('Made with your test secret (fc_test_…): a request on your test data.'),
  })
  .meta({ id: 'RequestRecord' });

/** A failed request as the operator sees it: the same, with whose it was. */
export const operatorRecordSchema = requestRecordSchema
  .extend({
    listing: z
      .string()
      .nullable()
      .describe(
        'The listing the path named: the external reference (PUT, PATCH, DELETE /listings/{externalReference}) or the id (GET /listings/{id}); null for other routes.',
      ),
    partner: z
      .object({ id: z.string(), name: z.string().nullable() })
      .nullable()
      .describe('Whose secret was sent; null when it named no partner. name is null for a deleted partner.'),
  })
  .meta({ id: 'OperatorRequestRecord' });

const STATUS_PATTERN = /^\s*([45]\d\d|[45]xx)\s*$/i;

/** GET /requests, for the partner and (with partnerId) the operator. */
export const requestRecordQuery = z.object({
  status: z
    .string()
    .regex(STATUS_PATTERN, 'must be a status from 400 to 599 (429) or a class (4xx, 5xx)')
    .transform((v) => v.trim().toLowerCase())
    .optional()
    .describe('Only this status (429) or class (4xx, 5xx).'),
  code: textParam(64)
    .refine((v) => v.toUpperCase() in ERROR_CODES, {
      message: `must be an error code: ${Object.keys(ERROR_CODES).join(', ')}`,
    })
    // The error table in the document (issue 40), any letter case, as the service reads it.
    .meta({ pattern: caseInsensitive(Object.keys(ERROR_CODES)) })
    .optional()
    .describe('Only this error code (VALIDATION_FAILED; any letter case).'),
  since: dateTimeParam
    .optional()
    .describe(
      `Only requests at or after this ISO 8601 instant (2026-11-25T10:00:00Z, or a date). ${DATE_TIME_WORDS}`,
    ),
  pageSize: positiveIntParam
    .optional()
    .describe(`Records per page (default ${DEFAULT_RECORD_PAGE}; above ${MAX_RECORD_PAGE} is clamped).`),
  cursor: cursorParam
    .optional()
    .describe('pagination.nextCursor of the previous page. Only a cursor this service issued is taken.'),
});

export const recordPagination = z.object({
  pageSize: z.number().int(),
  hasMore: z.boolean(),
  nextCursor: z.string().optional().describe('Send back as cursor for the next (older) page.'),
});

export const recordMeta = z.object({
  failuresNotKept: z
    .number()
    .int()
    .describe(
      'Failed requests that were counted but not kept one by one (more than 1,000 in a minute), since `since` or over the whole retention: when it is not 0, the list holds fewer failures than there were. Not narrowed by status or code.',
    ),
});

export const requestRecordPageSchema = z.object({
  data: z.array(requestRecordSchema),
  meta: recordMeta,
  pagination: recordPagination,
});

const counts = {
  requests: z.number().int(),
  clientErrors: z.number().int().describe('Answers 4xx (429 included).'),
  serverErrors: z.number().int().describe('Answers 5xx.'),
  rateLimited: z.number().int().describe('Answers 429.'),
  itemsWritten: z.number().int().describe('Bulk-upsert items created or updated.'),
  itemsFailed: z.number().int().describe('Bulk-upsert items refused.'),
  failuresNotKept: z
    .number()
    .int()
    .describe('Failures counted but not kept one by one (over the per-minute limit of records).'),
  previousKeyRequests: z
    .number()
    .int()
    .describe(
      "Of requests, those made with the partner's previous secret (during a rotation's grace period). The rest less retiredKeyRequests were made with the current secret.",
    ),
  retiredKeyRequests: z
    .number()
    .int()
    .describe('Of requests, those made with a secret a rotation retired (refused with 401).'),
};

/** A partner's traffic over 24 hours or 7 days (the operator's console). */
export const usageSchema = z.object({
  window: z
    .enum([...(Object.keys(USAGE_WINDOWS) as [keyof typeof USAGE_WINDOWS]), 'since'])
    .describe('The window asked for, or "since" when the query gave a start (`since`).'),
  test: z.boolean().describe('true: requests made with the test secret; false: live requests.'),
  bucketMinutes: z.number().int(),
  since: z.string(),
  totals: z.object(counts),
  buckets: z.array(z.object({ start: z.string(), ...counts })),
  topErrorCodes: z.array(z.object({ code: z.string(), status: z.number().int(), count: z.number().int() })),
});

/** One sign of what a partner tried in test mode: null until it did it once. */
const testSign = (what: string) =>
  z
    .object({
      count: z.number().int(),
      firstAt: z.string().describe('The first of them (when it arrived).'),
      lastAt: z.string().describe('The last of them.'),
    })
    .nullable()
    .describe(`${what}; null: never (or not within the request records' retention).`);

/**
 * What a partner has tried with its test secret: the signs that it is ready to go live (the
 * console's partner page, docs/test-mode.md "What the operator sees").
 */
export const testUseSchema = z.object({
  testListings: z.number().int().describe('Test listings it holds now (a wipe or the expiry empties them).'),
  written: testSign('Successful test writes of listings (PUT, PATCH, DELETE, bulk upsert, status)'),
  read: testSign('Successful test reads of listings and locations, without a cursor'),
  synced: testSign('Test list pages fetched with a cursor: it followed nextCursor, as the sync loop does'),
  events: testSign('Test reads of GET /events'),
  webhooksReceived: testSign('Test webhook deliveries its receiver acknowledged (answered 2xx)'),
});

/** A page of failed requests as the operator reads it. */
export const operatorRecordPageSchema = z.object({
  data: z.array(operatorRecordSchema),
  meta: recordMeta,
  pagination: recordPagination,
});

export type OperatorRequestRecord = z.output<typeof operatorRecordSchema>;
export type OperatorRequestPage = z.output<typeof operatorRecordPageSchema>;
export type Usage = z.output<typeof usageSchema>;
export type TestUse = z.output<typeof testUseSchema>;
