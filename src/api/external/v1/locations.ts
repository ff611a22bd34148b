import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ListingReads } from '../../../domain/listings/reads.js';
import { DEFAULT_LOCATION_PAGE, type LocationReads, MAX_LOCATION_PAGE } from '../../../domain/locations.js';
import { partnerMeta } from '../../../http/auth.js';
import type { Projection } from '../../../store/db.js';
import type { ListingJson } from '../../../store/listings/json.js';
import { locationJsonProjection } from '../../../store/location-json.js';
import {
  booleanParam,
  cursorParam,
  optionalTextParam,
  pick,
  positiveIntParam,
  uuidParam,
} from '../../schemas/query.js';
import { locationSchema, partnerErrors, partnerMetaSchema } from '../../schemas/responses.js';
import { paging, resolvePaging } from './listings/query-schema.js';
import { appliedFilters, listingListResponse, sendListingPage } from './listings/reads.js';
import { locationJson } from './location-view.js';
import { sendList } from './send-json.js';

export const locationsQuery = z
  .object({
    parentId: uuidParam.optional().describe('Only locations under this parent. Alias: parent_id.'),
    parent_id: uuidParam.optional().describe('Alias of parentId.'),
    includeChildren: booleanParam.optional().describe('Include deeper descendants (default true).'),
    withCounts: booleanParam.optional().describe('Include stats per location (default true).'),
    search: optionalTextParam(200)
      .optional()
      .describe(
        'Case-insensitive substring of company, full or display name, city, province or location code.',
      ),
    pageSize: positiveIntParam
      .optional()
      .describe(
        `Opt-in paging for large scopes: at most this many locations per answer (default without it: all of them; above ${MAX_LOCATION_PAGE} is clamped), with pagination.nextCursor for the next page. Aliases: page_size, limit.`,
      ),
    page_size: positiveIntParam.optional().describe('Alias of pageSize.'),
    limit: positiveIntParam.optional().describe('Alias of pageSize.'),
    cursor: cursorParam
      .optional()
      .describe(
        `pagination.nextCursor of an earlier page, with the same parentId, includeChildren and search: continue after it (pageSize defaults to ${DEFAULT_LOCATION_PAGE}). Only a cursor this service issued is taken.`,
      ),
  })
  .transform((q) => ({
    parentId: pick(q.parentId, q.parent_id),
    includeChildren: q.includeChildren ?? true,
    withCounts: q.withCounts ?? true,
    search: q.search || undefined,
    pageSize: pick(q.pageSize, q.page_size, q.limit),
    cursor: q.cursor || undefined,
  }));

const locationListingsQuery = z
  .object({
    ...paging,
    includeChildren: booleanParam
      .optional()
      .describe('Also list the listings of child locations (default false).'),
  })
  .transform((q) => ({
    ...resolvePaging(q),
    includeChildren: q.includeChildren ?? false,
    dealerIds: [],
    parentDealerId: undefined,
    externalReference: undefined,
  }));

const locationListResponse = z.object({
  data: z.array(locationSchema),
  pagination: z
    .object({
      pageSize: z.number().int(),
      nextCursor: z
        .string()
        .describe('Send back as cursor (same filters) for the next page; store it to resume.'),
      hasMore: z.boolean().describe('false only when no location follows this page.'),
    })
    .optional()
    .describe('Only when the request asked for pages (pageSize or cursor).'),
  meta: z.object({
    total: z.number().int().describe('Every location the filters match, on all pages.'),
    profileIds: z.array(z.string()),
    rootProfileIds: z.array(z.string()),
    filters: z.object({ parentId: z.string().nullable(), search: z.string().nullable() }),
    partner: partnerMetaSchema,
  }),
});
const locationListRest = locationListResponse.omit({ data: true });

export function locationRoutes(
  locations: LocationReads,
  listings: ListingReads,
  json: Projection<ListingJson>,
): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.get(
      '/locations',
      {
        config: { scope: 'read:locations' },
        schema: {
          summary: 'List dealer locations in your access scope',
          tags: ['Locations'],
          querystring: locationsQuery,
          response: {
            200: locationListResponse,
            ...partnerErrors,
          },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const query = request.query;
        const { data, total, pagination } = await locations.find(partner, query, locationJsonProjection);
        const rest = locationListRest.parse({
          ...(pagination ? { pagination } : {}),
          meta: {
            total,
            profileIds: partner.access.profileIds,
            rootProfileIds: partner.access.rootProfileIds,
            filters: { parentId: query.parentId ?? null, search: query.search ?? null },
            partner: partnerMeta(partner),
          },
        });
        // The locations' JSON comes finished (location-view.ts); the rest goes through its schema.
        return sendList(reply, data.map(locationJson), rest);
      },
    );

    app.get(
      '/locations/:id/listings',
      {
        config: { scope: 'read:listings' },
        schema: {
          summary: 'List the listings of one location',
          // One tag: with two, the page lists the operation twice.
          tags: ['Locations'],
          params: z.object({
            id: uuidParam.describe('The location (dealer profile) id, from GET /locations.'),
          }),
          querystring: locationListingsQuery,
          response: { 200: listingListResponse, ...partnerErrors },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const { id } = request.params;
        const query = request.query;
        const own = await locations.listingScope(partner.access, id, query.includeChildren);
        const filter = await listings.filter(partner, query, [own]);
        // The list is part of the cursor's filters: a cursor of this location's walk resumes only
        // this walk, not GET /listings or another location's (docs/api.md), where it would pass
        // listings that walk never saw.
        const context = `location:${id}:${query.includeChildren ? 'with-children' : 'own'}`;
        const page = await listings.page(filter, query, { projection: json, context });
        return sendListingPage(reply, page, {
          partner: partnerMeta(partner),
          filters: { locationId: id, ...appliedFilters(query) },
        });
      },
    );
  };
}
