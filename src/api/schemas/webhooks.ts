import { z } from 'zod';
import { EVENT_TYPE_NAMES } from '../../domain/events/registry.js';
import { deliverySchema } from '../../domain/shapes/webhooks.js';
import { DEFAULT_DELIVERY_PAGE, MAX_DELIVERY_PAGE } from '../../domain/webhooks/views.js';
import { cursorParam, positiveIntParam } from './query.js';

/** GET …/webhooks/{id}/deliveries, for the partner and the operator alike. */
export const deliveryQuery = z.object({
  pageSize: positiveIntParam
    .optional()
    .describe(`Attempts per page (default ${DEFAULT_DELIVERY_PAGE}; above ${MAX_DELIVERY_PAGE} is clamped).`),
  cursor: cursorParam
    .optional()
    .describe('pagination.nextCursor of the previous page. Only a cursor this service issued is taken.'),
});

export const deliveryPageSchema = z.object({
  data: z.array(deliverySchema),
  pagination: z.object({
    pageSize: z.number().int(),
    hasMore: z.boolean(),
    nextCursor: z.string().optional().describe('Send back as cursor for the next (older) page.'),
  }),
});

const TYPE_PATTERN = new RegExp(`^(${EVENT_TYPE_NAMES.map((t) => t.replaceAll('.', '\\.')).join('|')})$`);

/** POST /webhooks/{id}/test (partner and operator): optionally, the event type to send a sample of. */
export const testPingQuery = z.object({
  type: z
    .string()
    .regex(TYPE_PATTERN, `must be one of ${EVENT_TYPE_NAMES.join(', ')}`)
    .optional()
    .describe(
      `Send a sample delivery of this event type (one the endpoint subscribes to) instead of a ping: ${EVENT_TYPE_NAMES.join(', ')}.`,
    ),
});
