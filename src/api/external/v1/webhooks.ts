import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CURSOR_MAX_LENGTH, CURSOR_PATTERN } from '../../../domain/cursor.js';
import { ENUMS } from '../../../domain/enums.js';
import { DEFAULT_EVENTS, EVENT_TYPE_NAMES } from '../../../domain/events/registry.js';
import { TEXT_PATTERN } from '../../../domain/listings/field-types.js';
import { deliverySchema, endpointSchema } from '../../../domain/shapes/webhooks.js';
import { isStorableText, STORABLE_MESSAGE } from '../../../domain/text.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { MAX_URL_LENGTH } from '../../../domain/webhooks/target.js';
import { DEFAULT_DELIVERY_PAGE, MAX_ENDPOINTS_PER_PARTNER } from '../../../domain/webhooks/views.js';
import { auditContext } from '../../../http/audit-context.js';
import { parseBody } from '../../../http/validation.js';
import { WEBHOOK_BODY_EXAMPLES } from '../../openapi/webhook-examples.js';
import { uuidParam } from '../../schemas/query.js';
import { partnerErrors } from '../../schemas/responses.js';
import { deliveryPageSchema, deliveryQuery, testPingQuery } from '../../schemas/webhooks.js';

const SCOPES = ['manage:webhooks', 'read:listings'] as const;

const filterSchema = z
  .strictObject({
    status: z
      .array(z.enum(ENUMS.status.values))
      .min(1)
      .nullable()
      .optional()
      .describe(
        'Only listings in these statuses (null or absent: every status). A listing that leaves them is not pushed.',
      ),
    dealerProfileIds: z
      // Lower-cased as ids are everywhere else (an upper-case id of a dealer in scope was refused).
      .array(z.uuid().toLowerCase())
      .min(1)
      .max(100)
      .nullable()
      .optional()
      .describe(
        'Only listings of these dealer profiles and their sub-locations (null or absent: your whole access scope, as it is at each delivery).',
      ),
  })
  .nullable()
  .describe('Which changes this endpoint receives; within your access scope either way.');

/**
 * What checkTarget (src/domain/webhooks/target.ts) takes, as far as a pattern can say it (issue
 * 40): https, no space, control character or unpaired surrogate anywhere, no credentials (an @
 * before the path), no #fragment. That the host resolves, and to a public address, it checks when
 * the URL is saved; the description says so.
 */
const URL_REFUSED = '\\u0000-\\u0020\\u007f-\\u009f\\ud800-\\udfff';
const WEBHOOK_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]://[^${URL_REFUSED}/?#@]+([/?][^${URL_REFUSED}#]*)?$`;

const url = z
  .string()
  .min(1)
  .max(MAX_URL_LENGTH)
  .meta({ pattern: WEBHOOK_URL_PATTERN })
  .describe(
    'Where deliveries are POSTed: https, without credentials or #fragment; its host must resolve to a public address (checked when saved); redirects are not followed.',
  );
const description = z
  .string()
  .trim()
  .max(500)
  .refine(isStorableText, STORABLE_MESSAGE)
  .meta({ pattern: TEXT_PATTERN })
  .nullable();

const events = z
  .array(z.enum(EVENT_TYPE_NAMES, { error: `must be one of ${EVENT_TYPE_NAMES.join(', ')}` }))
  .min(1)
  .max(EVENT_TYPE_NAMES.length * 2)
  .describe(
    `The event types to receive (docs/webhooks.md, "Event types"); absent on creation: ${JSON.stringify(DEFAULT_EVENTS)}.`,
  );

// Closed objects, as the service reads them (parseBody refuses any other name as unknown_field):
// a document that allowed more would let a validating client send what the service refuses.
const createBody = z.strictObject({
  url,
  description: description.optional(),
  filter: filterSchema.optional(),
  events: events.optional(),
});

const patchBody = z
  .strictObject({
    url: url.optional(),
    description: description.optional(),
    filter: filterSchema.optional(),
    events: events.optional(),
    enabled: z
      .boolean()
      .optional()
      .describe('false pauses deliveries; true starts them again from where they stopped.'),
  })
  .refine((b) => Object.keys(b).length > 0, 'name at least one of url, description, filter, events, enabled')
  // The refinement says "at least one field" to the service; this says it to the document.
  .meta({ minProperties: 1 });

const resumeBody = z
  .strictObject({
    cursor: z
      .string()
      .max(CURSOR_MAX_LENGTH)
      // The cursor's form (src/domain/cursor.ts); whether it is one of this endpoint's deliveries
      // is checked when it is decoded.
      .regex(
        CURSOR_PATTERN,
        "is not the cursor of a delivery of this endpoint; pass a delivery's cursor exactly as received",
      )
      .optional()
      .describe(
        "The `cursor` of an earlier delivery: deliver every change after it again (a replay). Only a cursor of one of this endpoint's deliveries is taken.",
      ),
  })
  .optional();

const idParams = z.object({ id: uuidParam.describe('The webhook endpoint id.') });
const withSecret = endpointSchema.extend({
  secret: z
    .string()
    .describe('The signing secret (whsec_…, Standard Webhooks). Shown only here: store it now.'),
});
const writeErrors = {
  ...partnerErrors,
  405: partnerErrors[400],
  415: partnerErrors[400],
  422: partnerErrors[400],
};
/** PATCH (enabled: true) and resume: 409 while the operator holds the endpoint disabled. */
const enableErrors = { ...writeErrors, 409: partnerErrors[400] };

/** Webhook endpoints of the calling partner: /webhooks (docs/webhooks.md). */
export function webhookRoutes(webhooks: WebhookAdmin): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const tags = ['Webhooks'];

    app.post(
      '/webhooks',
      {
        config: {
          scope: SCOPES,
          documentedBody: createBody,
          bodyExamples: WEBHOOK_BODY_EXAMPLES.createWebhookEndpoint,
        },
        schema: {
          summary: 'Register a webhook endpoint',
          description: `Deliveries start with the changes committed after this answer. At most ${MAX_ENDPOINTS_PER_PARTNER} endpoints per partner.`,
          tags,
          response: { 201: z.object({ data: withSecret }), ...writeErrors },
        },
      },
      async (request, reply) => {
        const body = parseBody(createBody, request.body);
        const data = await webhooks.create(request.partner!, body, auditContext(request));
        return reply.status(201).send({ data });
      },
    );

    app.get(
      '/webhooks',
      {
        config: { scope: SCOPES },
        schema: {
          summary: 'List your webhook endpoints',
          tags,
          response: { 200: z.object({ data: z.array(endpointSchema) }), ...partnerErrors },
        },
      },
      async (request) => ({ data: await webhooks.list(request.partner!) }),
    );

    app.get(
      '/webhooks/:id',
      {
        config: { scope: SCOPES },
        schema: {
          summary: 'Get one webhook endpoint',
          tags,
          params: idParams,
          response: { 200: z.object({ data: endpointSchema }), ...partnerErrors },
        },
      },
      async (request) => ({ data: await webhooks.get(request.partner!, request.params.id) }),
    );

    app.patch(
      '/webhooks/:id',
      {
        config: {
          scope: SCOPES,
          documentedBody: patchBody,
          bodyExamples: WEBHOOK_BODY_EXAMPLES.updateWebhookEndpoint,
        },
        schema: {
          summary: 'Change a webhook endpoint (url, description, filter, events, enabled)',
          tags,
          params: idParams,
          response: { 200: z.object({ data: endpointSchema }), ...enableErrors },
        },
      },
      async (request) => {
        const body = parseBody(patchBody, request.body);
        return {
          data: await webhooks.update(request.partner!, request.params.id, body, auditContext(request)),
        };
      },
    );

    app.delete(
      '/webhooks/:id',
      {
        config: { scope: SCOPES, documentedResponses: { 204: 'Deleted: nothing more is delivered to it.' } },
        schema: { summary: 'Delete a webhook endpoint', tags, params: idParams, response: writeErrors },
      },
      async (request, reply) => {
        await webhooks.remove(request.partner!, request.params.id, auditContext(request));
        return (reply as FastifyReply).code(204).send(); // no body, so no schema
      },
    );

    app.post(
      '/webhooks/:id/rotate-secret',
      {
        config: { scope: SCOPES },
        schema: {
          summary: 'Rotate the signing secret',
          description:
            'The previous secret keeps signing beside the new one for 24 hours (both signatures are sent), so receivers can switch without losing a delivery.',
          tags,
          params: idParams,
          response: {
            200: z.object({
              data: withSecret.extend({
                previousSecretExpiresAt: z.string().describe('Until when the previous secret also signs.'),
              }),
            }),
            ...writeErrors,
          },
        },
      },
      async (request) => ({
        data: await webhooks.rotateSecret(request.partner!, request.params.id, auditContext(request)),
      }),
    );

    app.post(
      '/webhooks/:id/test',
      {
        config: { scope: SCOPES },
        schema: {
          summary: 'Send a signed ping, or a sample of an event type, now',
          description:
            'POSTs `{"type": "ping", "data": [], "cursor": …}`, signed, to the endpoint and answers with the attempt (also in the delivery log, as `ping`). With `type`, one of the types the endpoint subscribes to, it POSTs a sample delivery of that type instead: one item, the reference page\'s example listing (not yours), event ids `evt_test_…`. The endpoint\'s deliveries are not affected.',
          tags,
          params: idParams,
          querystring: testPingQuery,
          response: { 200: z.object({ data: deliverySchema }), ...writeErrors },
        },
      },
      async (request) => ({
        data: await webhooks.test(request.partner!, request.params.id, request.query.type),
      }),
    );

    app.post(
      '/webhooks/:id/resume',
      {
        config: {
          scope: SCOPES,
          documentedBody: resumeBody.unwrap(),
          bodyExamples: WEBHOOK_BODY_EXAMPLES.resumeWebhookEndpoint,
        },
        schema: {
          summary: 'Start a disabled endpoint again, or replay from a cursor',
          description:
            'Without a body: from where it stopped (the delivery that was failing is sent first). With `{"cursor": …}` from an earlier delivery: every change after it is delivered again.',
          tags,
          params: idParams,
          response: { 200: z.object({ data: endpointSchema }), ...enableErrors },
        },
      },
      async (request) => {
        const body = parseBody(resumeBody, request.body);
        return {
          data: await webhooks.resume(
            request.partner!,
            request.params.id,
            body?.cursor,
            auditContext(request),
          ),
        };
      },
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        config: { scope: SCOPES },
        schema: {
          summary: "An endpoint's delivery log, newest first",
          description: 'One entry per attempt, kept 30 days.',
          tags,
          params: idParams,
          querystring: deliveryQuery,
          response: { 200: deliveryPageSchema, ...partnerErrors },
        },
      },
      async (request) =>
        webhooks.deliveries(request.partner!, request.params.id, {
          pageSize: request.query.pageSize ?? DEFAULT_DELIVERY_PAGE,
          cursor: request.query.cursor,
        }),
    );
  };
}
