import { z } from 'zod';
import { EVENT_TYPE_NAMES } from '../events/registry.js';

/*
 * A webhook endpoint and its delivery log as the API shows them: the one definition the domain's
 * views (domain/webhooks/views.ts), the routes' responses, the OpenAPI document and the CLI share.
 */

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
    events: z
      .array(z.enum(EVENT_TYPE_NAMES))
      .describe('The event types it receives (docs/webhooks.md, "Event types").'),
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

/** Every partner's endpoints, for the operator: the same, with whose it is. */
export const operatorEndpointSchema = endpointSchema
  .extend({
    partnerId: z.string(),
    test: z
      .boolean()
      .describe('Registered with the test secret: receives test data only (docs/test-mode.md).'),
  })
  .meta({ id: 'OperatorWebhookEndpoint' });

/** One delivery attempt in an endpoint's log. */
export const deliverySchema = z
  .object({
    id: z.string().describe('This attempt.'),
    webhookId: z.string().describe('The webhook-id header: the same on every attempt of one delivery.'),
    type: z.enum([...EVENT_TYPE_NAMES, 'ping']).describe('The event type delivered, or ping (a test).'),
    attempt: z.number().int(),
    status: z.enum(['succeeded', 'failed']),
    listingCount: z
      .number()
      .int()
      .describe('Listings (listings.changed) or events (other types) the delivery carries.'),
    responseCode: z.number().int().nullable(),
    responseBody: z.string().nullable().describe('The first kilobyte of the answer.'),
    error: z.string().nullable().describe('Why the attempt failed, in words.'),
    durationMs: z.number().int(),
    nextAttemptAt: z.string().nullable().describe('When a failed delivery is tried again.'),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

/** An endpoint as the domain builds it (the partner's routes leave partnerId out). */
export type EndpointView = z.output<typeof operatorEndpointSchema>;
export type EndpointFilter = EndpointView['filter'];
export type DeliveryView = z.output<typeof deliverySchema>;
