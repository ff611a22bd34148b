import { z } from 'zod';
import { DEFAULT_DELIVERY_PAGE, MAX_DELIVERY_PAGE } from '../../domain/webhooks/endpoints.js';
import { positiveIntParam } from './query.js';

/** A webhook endpoint as its owner (and the operator) sees it; never its secret. */
export const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    filter: z.object({
      status: z.array(z.string()).nullable(),
      dealerProfileIds: z.array(z.string()).nullable(),
    }),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe('Why it stopped: 410 Gone, 3 days of failures, you (enabled: false) or the operator.'),
    disabledAt: z.string().nullable(),
    failingSince: z
      .string()
      .nullable()
      .describe('Since when deliveries fail without a 2xx in between; null when they do not.'),
    pendingDelivery: z
      .object({
        webhookId: z.string(),
        attempt: z.number().int().describe('Attempts made so far.'),
        nextAttemptAt: z.string(),
      })
      .nullable()
      .describe('The delivery sent and not yet acknowledged: nothing after it is sent until it is.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

/** One delivery attempt in an endpoint's log. */
export const deliverySchema = z
  .object({
    id: z.string().describe('This attempt.'),
    webhookId: z.string().describe('The webhook-id header: the same on every attempt of one delivery.'),
    type: z.enum(['listings.changed', 'ping']),
    attempt: z.number().int(),
    status: z.enum(['succeeded', 'failed']),
    listingCount: z.number().int(),
    responseCode: z.number().int().nullable(),
    responseBody: z.string().nullable().describe('The first kilobyte of the answer.'),
    error: z.string().nullable().describe('Why the attempt failed, in words.'),
    durationMs: z.number().int(),
    nextAttemptAt: z.string().nullable().describe('When a failed delivery is tried again.'),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

/** GET …/webhooks/{id}/deliveries, for the partner and the operator alike. */
export const deliveryQuery = z.object({
  pageSize: positiveIntParam
    .optional()
    .describe(`Attempts per page (default ${DEFAULT_DELIVERY_PAGE}; above ${MAX_DELIVERY_PAGE} is clamped).`),
  cursor: z.string().max(1000).optional().describe('pagination.nextCursor of the previous page.'),
});

export const deliveryPageSchema = z.object({
  data: z.array(deliverySchema),
  pagination: z.object({
    pageSize: z.number().int(),
    hasMore: z.boolean(),
    nextCursor: z.string().optional().describe('Send back as cursor for the next (older) page.'),
  }),
});
