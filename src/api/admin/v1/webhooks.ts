import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { adminName } from '../../../domain/shapes/admin-fields.js';
import { deliverySchema, operatorEndpointSchema } from '../../../domain/shapes/webhooks.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { DEFAULT_DELIVERY_PAGE } from '../../../domain/webhooks/views.js';
import { auditContext } from '../../../http/audit-context.js';
import { uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';
import { deliveryPageSchema, deliveryQuery, testPingQuery } from '../../schemas/webhooks.js';

const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 422: errorResponse };
const idParams = z.object({ id: uuidParam });
const tags = ['Admin'];

export function webhookAdminRoutes(webhooks: WebhookAdmin): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.get(
      '/webhooks',
      {
        schema: {
          tags,
          summary: "Every partner's webhook endpoints (or one partner's), oldest first",
          querystring: z.object({ partnerId: uuidParam.optional() }),
          response: { 200: z.object({ data: z.array(operatorEndpointSchema) }), ...errors },
        },
      },
      async (request) => ({ data: await webhooks.listAll(request.query.partnerId ?? null) }),
    );

    app.get(
      '/webhooks/:id',
      {
        schema: {
          tags,
          summary: 'One webhook endpoint: state, failing since, pending delivery',
          params: idParams,
          response: { 200: z.object({ data: operatorEndpointSchema }), ...errors },
        },
      },
      async (request) => ({ data: await webhooks.getAny(request.params.id) }),
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        schema: {
          tags,
          summary: "A webhook endpoint's delivery log, newest first",
          params: idParams,
          querystring: deliveryQuery,
          response: { 200: deliveryPageSchema, ...errors },
        },
      },
      async (request) =>
        webhooks.deliveriesOfAny(request.params.id, {
          pageSize: request.query.pageSize ?? DEFAULT_DELIVERY_PAGE,
          cursor: request.query.cursor,
        }),
    );

    app.post(
      '/webhooks/:id/disable',
      {
        schema: {
          tags,
          summary: 'Disable a webhook endpoint; the partner sees the reason and cannot resume it',
          params: idParams,
          body: z.object({ reason: adminName(500).optional() }).optional(),
          response: { 200: z.object({ data: operatorEndpointSchema }), ...errors },
        },
      },
      async (request) => ({
        data: await webhooks.disable(request.params.id, request.body?.reason, auditContext(request)),
      }),
    );

    app.post(
      '/webhooks/:id/test',
      {
        schema: {
          tags,
          summary: 'Send a signed ping now and answer with the attempt (what the receiver answered)',
          description:
            "Checks a receiver without touching the endpoint's deliveries: works on an enabled endpoint (no need to disable a failing one) and a disabled one. With `type` (one the endpoint subscribes to), a sample delivery of that event type instead of a ping. The attempt is in the delivery log.",
          params: idParams,
          querystring: testPingQuery,
          response: { 200: z.object({ data: deliverySchema }), ...errors },
        },
      },
      async (request) => ({ data: await webhooks.testAny(request.params.id, request.query.type) }),
    );

    app.post(
      '/webhooks/:id/retry',
      {
        schema: {
          tags,
          summary: 'Send what a failing endpoint is waiting to retry now, not after its back-off',
          description:
            'For an endpoint whose receiver is fixed: its wait may have grown to an hour. Both of its walks that are failing, of listings and of events, are due now. The attempt count and the 3-day period go on; the partner sees no disable. 409 when the endpoint is disabled (resume it: POST /webhooks/{id}/enable) or nothing of it is failing.',
          params: idParams,
          response: { 200: z.object({ data: operatorEndpointSchema }), ...errors, 409: errorResponse },
        },
      },
      async (request) => ({ data: await webhooks.retryNow(request.params.id, auditContext(request)) }),
    );

    app.post(
      '/webhooks/:id/enable',
      {
        schema: {
          tags,
          summary: 'Enable a webhook endpoint again, from where it stopped',
          params: idParams,
          response: { 200: z.object({ data: operatorEndpointSchema }), ...errors },
        },
      },
      async (request) => ({ data: await webhooks.enable(request.params.id, auditContext(request)) }),
    );
  };
}
