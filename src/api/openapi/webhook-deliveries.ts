/**
 * The `webhooks` section of the partner document (OpenAPI 3.1): what the service POSTs to a
 * partner's endpoint, as domain/webhooks/payload.ts builds it and docs/webhooks.md explains it.
 * The listings in `data` are the Listing schema that GET /listings/{id} answers with.
 */

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI fragment
type Json = Record<string, any>;

const HEADERS: Json[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'The delivery’s id (msg_…): the same on every retry of this delivery. Keep the ids you applied for a few days and skip one that comes again (delivery is at least once).',
    schema: { type: 'string', pattern: '^msg_' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, in seconds since 1970 (UTC). Refuse one more than 5 minutes from your clock.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of your secret after `whsec_`; during a secret rotation two, separated by a space (accept if any verifies).',
    schema: { type: 'string', pattern: '^v1,' },
  },
];

const RESPONSES: Json = {
  '2XX': {
    description:
      'Received: the endpoint moves past these listings. Answer within 10 seconds; only the first kilobyte of your answer is kept.',
  },
  default: {
    description:
      'Any other answer (or none within 10 seconds, or a redirect): the same delivery is retried with backoff; after 3 days of failures the endpoint is disabled.',
  },
};

function delivery(type: 'listings.changed' | 'ping', summary: string, description: string): Json {
  const data =
    type === 'ping'
      ? { type: 'array', maxItems: 0, description: 'Empty: a test delivery carries no listings.' }
      : {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: { $ref: '#/components/schemas/Listing' },
          description:
            'Each listing as GET /listings/{id} shows it, in its state at delivery, oldest change first ((updatedAt, id) order).',
        };
  return {
    post: {
      summary,
      description,
      operationId: type === 'ping' ? 'webhookPing' : 'webhookListingsChanged',
      tags: ['Webhooks'],
      parameters: HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              additionalProperties: false,
              required: ['type', 'data', 'cursor'],
              properties: {
                type: { type: 'string', const: type },
                data,
                cursor: {
                  type: 'string',
                  description:
                    'The endpoint’s position after this delivery: send it to POST /webhooks/{id}/resume to have every later change delivered again (a replay).',
                },
              },
            },
          },
        },
      },
      responses: RESPONSES,
      security: [],
    },
  };
}

export function webhookDeliveries(): Json {
  return {
    'listings.changed': delivery(
      'listings.changed',
      'Listings changed',
      'POSTed to your endpoint with the listings in your scope (and its filter) that changed since the previous delivery, 1 to 100 at a time, in order; the next waits for your 2xx.',
    ),
    ping: delivery(
      'ping',
      'Test delivery',
      'POSTed by POST /webhooks/{id}/test, signed like every delivery (with both secrets during a rotation), with no listings. It does not move the endpoint.',
    ),
  };
}
