import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  type RequestRecordReads,
  USAGE_WINDOWS,
  type UsageWindow,
} from '../../../domain/request-records/reads.js';
import { uuidParam } from '../../schemas/query.js';
import {
  recordMeta,
  recordPagination,
  requestRecordQuery,
  requestRecordSchema,
  usageSchema,
} from '../../schemas/requests.js';
import { errorResponse } from '../../schemas/responses.js';

const operatorRecordSchema = requestRecordSchema
  .extend({
    partner: z
      .object({ id: z.string(), name: z.string().nullable() })
      .nullable()
      .describe('Whose secret was sent; null when it named no partner. name is null for a deleted partner.'),
  })
  .meta({ id: 'OperatorRequestRecord' });

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
          }),
          response: {
            200: z.object({
              data: z.array(operatorRecordSchema),
              meta: recordMeta,
              pagination: recordPagination,
            }),
            ...errors,
          },
        },
      },
      async (request) => records.ofAny({ ...request.query, since: request.query.since?.toISOString() }),
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
          }),
          response: { 200: z.object({ data: usageSchema }), ...errors },
        },
      },
      async (request) => ({
        data: await records.usage(
          request.params.id === 'none' ? null : request.params.id,
          request.query.window ?? '24h',
        ),
      }),
    );
  };
}
