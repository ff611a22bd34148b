import type { SwaggerOptions } from '@fastify/swagger';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { describeErrors } from './error-codes.js';
import { errorExamples } from './error-examples.js';
import { RESPONSE_EXAMPLES } from './examples.js';
import { webhookDeliveries } from './webhook-deliveries.js';

/**
 * The partner OpenAPI 3.1 document, generated from the very Zod schemas that validate requests and
 * serialize responses: nothing here restates a field. What this file adds is what a route schema
 * cannot say by itself: which routes are the partner API, the security scheme, the error codes
 * and headers of each response, and the request bodies the domain validates itself.
 */
export const PARTNER_PREFIX = '/api/external/v1';

/** GET /listings/:id and PUT, DELETE /listings/:externalReference: one path here, /listings/{listing}. */
const LISTING_PATH = /^\/listings\/:(id|externalReference)$/;

/** A partner route's path (without the prefix) as this document writes it: /listings/{listing}. */
export function documentedPath(path: string): string {
  return path.replace(LISTING_PATH, '/listings/:listing').replace(/:(\w+)/g, '{$1}');
}

/** Route config of an operation whose body is validated in the domain (per item, for bulk). */
interface DocumentedRoute {
  /** The body shape, for the document only: Fastify does not validate it. */
  documentedBody?: z.ZodType;
  /** Examples of the body, by name. */
  bodyExamples?: Record<string, { summary: string; value: unknown }>;
  /** Responses without a body that the route sends by itself (304), with their description. */
  documentedResponses?: Record<number, string>;
  /** The route answers with an ETag and honours If-None-Match (GET /listings/{id}). */
  etag?: boolean;
  /** A write to one listing: answers with its new ETag, honours If-Match (412 when it fails). */
  ifMatch?: boolean;
}

const WRITE_ETAG_HEADER = {
  ETag: {
    type: 'string',
    description:
      "The listing's version after this write (the ETag GET /listings/{id} gives); send it as If-Match on your next write.",
  },
};
const PRECONDITION_ETAG_HEADER = {
  ETag: {
    type: 'string',
    description: "The listing's current version; absent when you have no listing with this reference.",
  },
};

const ETAG_HEADER = {
  ETag: {
    type: 'string',
    description: 'The version of what this answer shows; send it back as If-None-Match.',
  },
};

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { type: 'integer', description: 'Your requests allowed per minute.' },
  'RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current minute.' },
  'RateLimit-Reset': { type: 'integer', description: 'Seconds until the current minute ends.' },
};
const REQUEST_ID = {
  'X-Request-Id': {
    type: 'string',
    description: 'Your X-Request-Id when you sent one, else ours; quote it when you ask for help.',
  },
};
const RETRY_AFTER = {
  'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' },
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  200: 'OK',
  201: 'Created: the reference was new.',
};

/**
 * JSON Schema overrides. Query values arrive as strings and are parsed strictly by their Zod
 * schema; the document shows the type they stand for (`x-query-type`) so that clients generated
 * from it pass an integer or a boolean, not a string.
 */
function override(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const { jsonSchema } = ctx;
  const queryType = jsonSchema['x-query-type'] as Record<string, unknown> | undefined;
  if (queryType) {
    for (const key of ['type', 'pattern', 'format', 'x-query-type']) delete jsonSchema[key];
    Object.assign(jsonSchema, queryType);
  }
  // An `unknown` member of a union documents nothing; the library's default override drops it too.
  if (Array.isArray(jsonSchema.anyOf)) {
    jsonSchema.anyOf = jsonSchema.anyOf.filter((s) => Object.keys(s as object).length > 0);
  }
}

/** Request-body examples by operationId, collected by the route transform. */
const bodyExamples = new Map<string, DocumentedRoute['bodyExamples']>();

const zodTransform = createJsonSchemaTransform({
  skipList: [],
  zodToJsonConfig: { override: override as never },
});

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema and OpenAPI objects are walked by key
type Json = Record<string, any>;

/**
 * GET /listings/{id} takes the service UUID while PUT and DELETE /listings/{externalReference}
 * take your reference: two templates at one path, which OpenAPI forbids (they would be
 * "identical paths"). The document shows one template, {listing}, described per operation.
 */
const LISTING_PARAM: Record<string, { from: string; description: string }> = {
  GET: { from: 'id', description: 'The listing id (`data.id`, a UUID the service assigned).' },
  PUT: {
    from: 'externalReference',
    description: 'Your own reference for the listing (1 to 128 characters).',
  },
  PATCH: { from: 'externalReference', description: 'Your own reference for the listing.' },
  DELETE: { from: 'externalReference', description: 'Your own reference for the listing.' },
};

export const swaggerOptions: SwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Forecourt partner API',
      version: '1.0.0',
      description: [
        'Read dealer locations and vehicle listings in your access scope; create, update, bulk-upsert,',
        're-status and mark as sold your own listings, addressed by your own reference.',
        '',
        'Authenticate every request with `Authorization: Bearer <API secret>` (or `X-API-Key`).',
        'Errors share one envelope `{"error": {"code", "message", "requestId", "issues"?}}`; each',
        'response below lists the codes it may carry and what to do about each. The partner guide',
        '(/docs/guides/partner-guide on this service) walks through a first call, sync and bulk import.',
      ].join('\n'),
      // No link: the terms are the partner agreement, not a public licence (an SPDX identifier made
      // Swagger UI link to a page that does not exist).
      license: { name: 'Proprietary: the terms of your partner agreement' },
      contact: { name: 'Marketplace operator' },
    },
    servers: [{ url: PARTNER_PREFIX, description: 'This service' }],
    tags: [
      { name: 'Listings', description: 'Read listings in your access scope; sync with cursors.' },
      {
        name: 'Listings (write)',
        description: 'Create, update and re-status your own listings (scope write:listings).',
      },
      { name: 'Locations', description: 'Dealer locations (profiles) in your access scope.' },
      { name: 'Reference', description: 'Allowed values of enumerated fields.' },
      {
        name: 'Webhooks',
        description:
          'Changes pushed to your HTTPS endpoint, signed (Standard Webhooks); the deliveries are described under webhooks.',
      },
      {
        name: 'Requests',
        description:
          'Your failed requests, kept for days: why an answer was an error, found by its request id.',
      },
      {
        name: 'Test mode',
        description:
          'A test secret (`fc_test_…`) works on your own test data only, with the same endpoints, scopes and access as your live secret; answers carry `Forecourt-Mode: test`.',
      },
    ],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'Your API secret (`fc_…`), issued by the marketplace operator.',
        },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'The same secret in X-API-Key, for clients that cannot set Authorization.',
        },
      },
    },
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  },
  transform: (document) => {
    const { url, route } = document;
    // Only the partner API is documented here; health and operator routes are not partners' business.
    if (!url.startsWith(`${PARTNER_PREFIX}/`) || url === `${PARTNER_PREFIX}/openapi.json`) {
      return { schema: { hide: true }, url };
    }
    const method = String(route.method);
    const config = (route.config ?? {}) as DocumentedRoute & {
      scope?: string | readonly string[] | { anyOf: readonly string[] };
    };
    const source = { ...(document.schema as Json) };
    if (config.documentedBody) source.body = config.documentedBody;
    const { schema } = zodTransform({ ...document, schema: source });
    const out = schema as Json;
    let path = url.slice(PARTNER_PREFIX.length);

    const listingParam = LISTING_PARAM[method];
    if (LISTING_PATH.test(path) && listingParam && out.params) {
      path = '/listings/:listing';
      const properties = out.params.properties as Json;
      properties.listing = { ...properties[listingParam.from], description: listingParam.description };
      delete properties[listingParam.from];
      out.params.required = ['listing'];
    }

    const write = method !== 'GET';
    out.operationId = operationId(method, path);
    if (config.scope) {
      const { scope } = config;
      const anyOf = typeof scope === 'object' && 'anyOf' in scope ? scope.anyOf : undefined;
      const scopes = (anyOf ?? [scope].flat()).map((name) => `\`${name}\``);
      const line = anyOf
        ? `Scope: ${scopes.join(' or ')}.`
        : `Scope${scopes.length > 1 ? 's' : ''}: ${scopes.join(' and ')}.`;
      out.description = [out.description, line].filter(Boolean).join('\n\n');
    }
    // Added to the finished document (transformObject): a body that is a $ref loses extra keys here.
    if (config.bodyExamples) bodyExamples.set(out.operationId, config.bodyExamples);
    for (const [status, json] of Object.entries((out.response ?? {}) as Json)) {
      const code = Number(status);
      const headers = {
        ...REQUEST_ID,
        ...RATE_LIMIT_HEADERS,
        ...(code === 429 || code === 503 ? RETRY_AFTER : {}),
        ...(code === 405 ? { Allow: { type: 'string', description: 'The methods this path allows.' } } : {}),
        ...(config.etag && code === 200 ? ETAG_HEADER : {}),
        ...(config.ifMatch && (code === 200 || code === 201) ? WRITE_ETAG_HEADER : {}),
        ...(config.ifMatch && code === 412 ? PRECONDITION_ETAG_HEADER : {}),
      };
      // Real examples (examples.ts): without them the page generates misleading ones.
      const examples =
        code >= 400
          ? errorExamples(code, write, out.operationId)
          : RESPONSE_EXAMPLES[out.operationId]?.[code];
      out.response[status] = {
        description:
          code >= 400
            ? describeErrors(code, write, out.operationId)
            : (json.description ?? SUCCESS_DESCRIPTIONS[status] ?? 'OK'),
        headers,
        content: {
          'application/json': {
            schema: json,
            ...(examples && Object.keys(examples).length ? { examples } : {}),
          },
        },
      };
    }
    for (const [status, description] of Object.entries(config.documentedResponses ?? {})) {
      // type 'null': a response without content.
      out.response[status] = {
        type: 'null',
        description,
        headers: { ...REQUEST_ID, ...RATE_LIMIT_HEADERS, ...(config.etag ? ETAG_HEADER : {}) },
      };
    }
    if (config.etag) {
      // Declared for the document only: the route reads the header itself (a header schema would
      // make Fastify check every other header against it).
      out.headers = {
        type: 'object',
        properties: {
          'If-None-Match': {
            type: 'string',
            description:
              'An ETag from an earlier answer (or several, comma-separated, or *): 304 while it still holds.',
          },
        },
      };
    }
    if (config.ifMatch) {
      // For the document only, as If-None-Match above: the handler reads the header itself.
      out.headers = {
        type: 'object',
        properties: {
          'If-Match': {
            type: 'string',
            description:
              'An ETag of this listing (from GET /listings/{id} or an earlier write), quotes included: the write applies only while that is still its version, else 412 PRECONDITION_FAILED with the current ETag. `*`: only if the listing exists. Several tags, comma-separated: any of them. A value that is neither `*` nor quoted entity tags (`"…"` or `W/"…"`, RFC 9110), such as an ETag without its quotes: 400 INVALID_HEADER.',
          },
        },
      };
    }
    return { schema: out as never, url: `${PARTNER_PREFIX}${path}` };
  },
  transformObject: (documentObject) => {
    const document = jsonSchemaTransformObject(documentObject) as Json;
    for (const item of Object.values<Json>(document.paths ?? {})) {
      for (const operation of Object.values<Json>(item)) {
        const examples = bodyExamples.get(operation.operationId);
        const media = operation.requestBody?.content?.['application/json'];
        if (examples && media) media.examples = examples;
        // A merge patch has a media type of its own (RFC 7396); application/json is taken too.
        if (operation.operationId === 'patchListing' && media) {
          operation.requestBody.content = {
            'application/merge-patch+json': media,
            'application/json': media,
          };
        }
        // Resume takes a body only for a replay: without one it resumes where deliveries stopped.
        if (OPTIONAL_BODIES.has(operation.operationId) && operation.requestBody) {
          operation.requestBody.required = false;
        }
      }
    }
    document.webhooks = webhookDeliveries();
    return withoutSafeIntegerBounds(withoutUnusedComponents(document));
  },
};

/** Operations whose body may be left out altogether. */
const OPTIONAL_BODIES = new Set(['resumeWebhookEndpoint']);

/** listListings, getListing, putListing, bulkUpsertListings, setListingStatus, deleteListing, … */
function operationId(method: string, path: string): string {
  const known: Record<string, string> = {
    'GET /listings': 'listListings',
    'GET /listings/:listing': 'getListing',
    'PUT /listings/:listing': 'upsertListing',
    'PATCH /listings/:listing': 'patchListing',
    'DELETE /listings/:listing': 'markListingSold',
    'POST /listings/bulk-upsert': 'bulkUpsertListings',
    'POST /listings/:externalReference/status': 'setListingStatus',
    'GET /locations': 'listLocations',
    'GET /locations/:id': 'getLocation',
    'GET /locations/:id/listings': 'listLocationListings',
    'GET /reference/enums': 'getEnums',
    'POST /webhooks': 'createWebhookEndpoint',
    'GET /webhooks': 'listWebhookEndpoints',
    'GET /webhooks/:id': 'getWebhookEndpoint',
    'PATCH /webhooks/:id': 'updateWebhookEndpoint',
    'DELETE /webhooks/:id': 'deleteWebhookEndpoint',
    'POST /webhooks/:id/rotate-secret': 'rotateWebhookSecret',
    'POST /webhooks/:id/test': 'testWebhookEndpoint',
    'POST /webhooks/:id/resume': 'resumeWebhookEndpoint',
    'GET /webhooks/:id/deliveries': 'listWebhookDeliveries',
    'GET /events': 'listEvents',
    'GET /requests': 'listRequests',
    'GET /requests/:requestId': 'getRequest',
    'DELETE /test-data': 'wipeTestData',
  };
  const id = known[`${method} ${path}`];
  if (!id) throw new Error(`No operationId for ${method} ${path}: add it to src/api/openapi/document.ts`);
  return id;
}

/**
 * The component schemas come from Zod's global registry, which also holds the operator API's
 * (Partner, AuditEntry, …) and an input variant of each. Keep only those the partner paths use.
 */
function withoutUnusedComponents(document: Json): Json {
  const schemas = (document.components?.schemas ?? {}) as Json;
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') {
        const name = child.replace('#/components/schemas/', '');
        if (!used.has(name) && schemas[name]) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(child);
    }
  };
  visit(document.paths);
  document.components.schemas = Object.fromEntries(
    Object.entries(schemas).filter(([name]) => used.has(name)),
  );
  // Request-only schemas get an "Input" suffix from the Zod transform, so that a schema used both
  // ways would not collide; ours are one-way, and "ListingWrite" reads better than "ListingWriteInput".
  let text = JSON.stringify(document);
  for (const name of used) {
    const base = name.replace(/Input$/, '');
    if (base !== name && !used.has(base))
      text = text.replaceAll(`"${name}"`, `"${base}"`).replaceAll(`/${name}"`, `/${base}"`);
  }
  return JSON.parse(text);
}

/**
 * z.number().int() says "a safe integer" as ±2^53 bounds: noise that the page shows as examples
 * (-9007199254740991) and that no partner needs. Real bounds stay.
 */
function withoutSafeIntegerBounds(document: Json): Json {
  return JSON.parse(JSON.stringify(document), (key, value) =>
    (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) ||
    (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)
      ? undefined
      : value,
  );
}
