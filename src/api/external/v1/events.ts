import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_EVENT_PAGE } from '../../../domain/events/feed.js';
import { OUTBOX_EVENT_TYPES } from '../../../domain/events/registry.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { cursorParam, DATE_TIME_WORDS, dateTimeParam, positiveIntParam } from '../../schemas/query.js';
import { partnerErrors } from '../../schemas/responses.js';

/** One or more outbox types, comma-separated: what eventPage takes (domain/events/feed.ts). */
const TYPE_NAME = `(${OUTBOX_EVENT_TYPES.map((t) => t.replaceAll('.', '\\.')).join('|')})`;
const TYPES_PATTERN = new RegExp(`^${TYPE_NAME}(,${TYPE_NAME})*$`);

const query = z.object({
  types: z
    .string()
    .regex(TYPES_PATTERN, `must be one or more of ${OUTBOX_EVENT_TYPES.join(', ')}, separated by commas`)
    .optional()
    .describe(`Comma-separated event types (default: every one: ${OUTBOX_EVENT_TYPES.join(', ')}).`),
  // The date-time every query takes (a fuzzer's year 0000 passed z.iso and was a 500 on PostgreSQL).
  since: dateTimeParam
    .optional()
    .describe(
      `Without a cursor: start with the events after this ISO 8601 instant (default: the oldest kept, 30 days). ${DATE_TIME_WORDS}`,
    ),
  pageSize: positiveIntParam.optional().describe(`Events per page (default and most: ${MAX_EVENT_PAGE}).`),
  cursor: cursorParam
    .optional()
    .describe(
      'pagination.nextCursor of the previous page, with the same types. Only a cursor this service issued is taken.',
    ),
});

const event = z
  .looseObject({
    id: z.string(),
    type: z.enum(OUTBOX_EVENT_TYPES as [string, ...string[]]),
    occurredAt: z.string(),
    listingId: z.string(),
    externalReference: z.string(),
  })
  .describe(
    "An event as a webhook delivery carries it, with its type; the Webhooks section has each type's fields.",
  );

/** GET /events: the events of the partner's scope, as webhook endpoints receive them (docs/webhooks.md). */
export function eventRoutes(webhooks: Pick<WebhookAdmin, 'eventPage'>): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/events',
      {
        config: { scope: ['read:listings'] },
        schema: {
          summary: 'Read the events of your listings, in order',
          description:
            'The events webhook endpoints subscribe to (image checks, readiness), oldest first, in commit order, cursor paged like sync: keep nextCursor and ask again for what comes next. Kept 30 days.',
          tags: ['Webhooks'],
          querystring: query,
          response: {
            200: z.object({
              data: z.array(event),
              pagination: z.object({
                pageSize: z.number().int(),
                hasMore: z.boolean(),
                nextCursor: z
                  .string()
                  .describe('Send back as cursor, now or later, for the events after this page.'),
              }),
            }),
            ...partnerErrors,
          },
        },
      },
      async (request) =>
        webhooks.eventPage(request.partner!, {
          types: request.query.types?.split(',').map((t) => t.trim()),
          cursor: request.query.cursor,
          since: request.query.since?.toISOString(),
          pageSize: request.query.pageSize ?? MAX_EVENT_PAGE,
        }),
    );
  };
}
