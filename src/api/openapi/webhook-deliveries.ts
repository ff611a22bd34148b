/**
 * The `webhooks` section of the partner document (OpenAPI 3.1): what the service POSTs to a
 * partner's endpoint, one entry per event type of domain/events/registry.ts, as docs/webhooks.md
 * explains them. The listings of `listings.changed` are the Listing schema of GET /listings/{id}.
 */

import { z } from 'zod';
import { EVENT_TYPES, type EventType, eventSchema } from '../../domain/events/registry.js';

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

/** A body's JSON Schema from its Zod schema (registry.ts), as OpenAPI 3.1 takes it inline. */
function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Json;
  return rest;
}

function data(type: EventType | 'ping'): Json {
  if (type === 'ping')
    return { type: 'array', maxItems: 0, description: 'Empty: a test delivery carries nothing.' };
  if (type.cursorWalk) {
    return {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { $ref: '#/components/schemas/Listing' },
      description:
        'Each listing as GET /listings/{id} shows it, in its state at delivery, oldest change first ((updatedAt, id) order).',
    };
  }
  return {
    type: 'array',
    minItems: 1,
    maxItems: 100,
    items: jsonSchema(eventSchema(type)),
    description:
      'Events of this type, oldest first: in the order they happened for each listing (docs/webhooks.md, "Ordering").',
  };
}

function delivery(type: EventType | 'ping', summary: string, description: string): Json {
  const name = type === 'ping' ? 'ping' : type.name;
  // The walk of listings carries a cursor (its position, for a replay); the events of the outbox do not.
  const cursor = type !== 'ping' && !type.cursorWalk ? null : CURSOR;
  return {
    post: {
      summary,
      description,
      operationId: operationIdOf(name),
      tags: ['Webhooks'],
      parameters: HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              additionalProperties: false,
              required: cursor ? ['type', 'data', 'cursor'] : ['type', 'data'],
              properties: {
                type: { type: 'string', const: name },
                data: data(type),
                ...(cursor ? { cursor } : {}),
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

const CURSOR: Json = {
  type: 'string',
  description:
    'The endpoint’s position after this delivery: send it to POST /webhooks/{id}/resume to have every later change delivered again (a replay).',
};

/** webhookPing, webhookListingsChanged, webhookListingImagesChecked, … */
function operationIdOf(name: string): string {
  return `webhook${name
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}`;
}

/** One entry per event type of the registry, and the test ping. */
export function webhookDeliveries(): Json {
  const section: Json = {};
  for (const type of EVENT_TYPES) section[type.name] = delivery(type, type.summary, type.description);
  section.ping = delivery(
    'ping',
    'Test delivery',
    'POSTed by POST /webhooks/{id}/test, signed like every delivery (with both secrets during a rotation), with no data. It does not move the endpoint.',
  );
  return section;
}
