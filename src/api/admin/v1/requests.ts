import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { fieldProblem } from '../../../domain/errors.js';
import { messages } from '../../../domain/messages.js';
import {
  MAX_SINCE_DAYS,
  type RequestRecordReads,
  USAGE_WINDOWS,
  type UsageWindow,
} from '../../../domain/request-records/reads.js';
import { booleanParam, dateTimeParam, textParam, uuidParam } from '../../schemas/query.js';
import {
  operatorRecordPageSchema,
  operatorRecordSchema,
  requestRecordQuery,
  testUseSchema,
  usageSchema,
} from '../../schemas/requests.js';
import { errorResponse } from '../../schemas/responses.js';

const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 429: errorResponse };

/** Any partner's failed requests and every partner's usage, for the operator (and the console). */
export function requestAdminRoutes(records: RequestRecordReads): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/requests',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Failed partner requests, newest first',
          querystring: requestRecordQuery.extend({
            partnerId: z
              .union([z.literal('none'), uuidParam])
              .optional()
              .describe('One partner; "none": requests whose secret named no partner.'),
            until: dateTimeParam.optional().describe('Only requests before this ISO 8601 instant.'),
            route: textParam(200)
              .optional()
              .describe('Only this route, as records write it (/listings/{listing}); exact.'),
            key: z
              .enum(['current', 'previous', 'retired', 'none'], {
                error: 'must be current, previous, retired or none',
              })
              .optional()
              .describe('Only requests that sent this secret; "none": no secret identified a partner.'),
          }),
          response: {
            200: operatorRecordPageSchema,
            ...errors,
          },
        },
      },
      async (request) =>
        records.ofAny({
          ...request.query,
          since: request.query.since?.toISOString(),
          until: request.query.until?.toISOString(),
        }),
    );

    app.get(
      '/requests/:requestId',
      {
        schema: {
          tags: ['Admin'],
          summary: 'A failed partner request by its request id (the newest, if several share it)',
          params: z.object({ requestId: z.string().min(1).max(128) }),
          response: { 200: z.object({ data: operatorRecordSchema }), ...errors },
        },
      },
      async (request) => ({ data: await records.oneOfAny(request.params.requestId) }),
    );

    app.get(
      '/partners/:id/test-use',
      {
        schema: {
          tags: ['Admin'],
          summary:
            'What a partner has tried with its test secret (written, read, synced, events, webhooks received): the signs it is ready to go live',
          params: z.object({ id: uuidParam }),
          response: { 200: z.object({ data: testUseSchema }), ...errors },
        },
      },
      async (request) => ({ data: await records.testUse(request.params.id) }),
    );

    app.get(
      '/partners/:id/usage',
      {
        schema: {
          tags: ['Admin'],
          summary: "A partner's requests, errors and bulk items over 24 hours (hourly) or 7 days (6-hourly)",
          params: z.object({ id: z.union([z.literal('none'), uuidParam]) }),
          querystring: z.object({
            window: z
              .enum(Object.keys(USAGE_WINDOWS) as [UsageWindow])
              .optional()
              .describe('24h (default) or 7d.'),
            since: dateTimeParam
              .optional()
              .describe(
                "Instead of a window: from this time's minute to now (at most 7 days back), in buckets of 1 minute over the first 3 hours, then 5, 15, 60 or 360 minutes (at most 180 buckets). A partner's secretRotatedAt gives the requests per secret since its rotation.",
              ),
            test: booleanParam
              .optional()
              .describe(
                'true: the requests made with the test secret (counted apart); default false, live requests.',
              ),
          }),
          response: { 200: z.object({ data: usageSchema }), ...errors },
        },
      },
      async (request) => {
        const { since } = request.query;
        if (since && since.getTime() < Date.now() - MAX_SINCE_DAYS * 86_400_000) {
          throw fieldProblem(
            'INVALID_QUERY',
            'query.since',
            messages.sinceTooFarBack(MAX_SINCE_DAYS),
            'too_small',
          );
        }
        return {
          data: await records.usage(
            request.params.id === 'none' ? null : request.params.id,
            request.query.window ?? '24h',
            since,
            request.query.test ?? false,
          ),
        };
      },
    );
  };
}
