import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestRecordReads } from '../../../domain/request-records/reads.js';
import { REQUEST_ID_PATTERN } from '../../../http/request-id.js';
import { requestRecordPageSchema, requestRecordQuery, requestRecordSchema } from '../../schemas/requests.js';
import { partnerErrors } from '../../schemas/responses.js';

// Either read scope: any partner may see why its own requests failed.
const SCOPES = ['read:listings', 'write:listings'] as const;
const tags = ['Requests'];

/** A partner's own failed requests: "why did my request fail?" answered without the operator. */
export function requestRecordRoutes(records: RequestRecordReads): FastifyPluginAsync {
  return async (plugin) => {
    const app = plugin.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/requests',
      {
        config: { scope: { anyOf: SCOPES } },
        schema: {
          summary: 'Your failed requests, newest first',
          description:
            'Every request of yours answered 4xx or 5xx (401s included, when the secret was one of yours), kept 7 days by default. Requests that succeeded are not listed. Only the mode of the secret you call with: a test secret lists the requests made with your test secret, a live one those made live.',
          tags,
          querystring: requestRecordQuery,
          response: { 200: requestRecordPageSchema, ...partnerErrors },
        },
      },
      async (request) =>
        records.ofPartner(request.partner!, {
          ...request.query,
          since: request.query.since?.toISOString(),
        }),
    );

    app.get(
      '/requests/:requestId',
      {
        config: { scope: { anyOf: SCOPES } },
        schema: {
          summary: 'One of your failed requests, by its request id',
          description:
            'The X-Request-Id of a failed answer (or the one you sent). 404 when no failed request of yours in this mode has that id: it succeeded, is older than the retention, was made in the other mode (test or live), or is not yours.',
          tags,
          params: z.object({
            // What an X-Request-Id may be (src/http/request-id.ts): no failed request has another.
            requestId: z
              .string()
              .min(1)
              .max(128)
              .regex(REQUEST_ID_PATTERN, 'is not a request id: 1 to 128 visible ASCII characters')
              .describe('The X-Request-Id of the answer (or the one you sent with the request).'),
          }),
          response: { 200: z.object({ data: requestRecordSchema }), ...partnerErrors },
        },
      },
      async (request) => ({
        data: await records.oneOfPartner(request.partner!, request.params.requestId),
      }),
    );
  };
}
