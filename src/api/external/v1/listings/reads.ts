import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { inScope, modeOf } from '../../../../domain/access.js';
import { notFound } from '../../../../domain/errors.js';
import { listingEtag } from '../../../../domain/etag.js';
import type { ListingQuery, ListingReads } from '../../../../domain/listings/reads.js';
import { messages } from '../../../../domain/messages.js';
import { partnerMeta } from '../../../../http/auth.js';
import type { Projection } from '../../../../store/db.js';
import type { ListingJson } from '../../../../store/listings/json.js';
import { listingIdParam } from '../../../schemas/query.js';
import {
  listingSchema,
  paginationSchema,
  partnerErrors,
  partnerMetaSchema,
} from '../../../schemas/responses.js';
import { sendJson, sendList } from '../send-json.js';
import { listingsQuery } from './query-schema.js';

export const listingListResponse = z.object({
  data: z.array(listingSchema),
  pagination: paginationSchema,
  meta: z.object({
    partner: partnerMetaSchema,
    filters: z.record(z.string(), z.unknown()).describe('The filters applied, after aliases and defaults.'),
  }),
});

const singleMeta = z.object({ partner: partnerMetaSchema });

export function listingRoutes(listings: ListingReads, json: Projection<ListingJson>): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.get(
      '/listings',
      {
        config: { scope: 'read:listings' },
        schema: {
          summary: 'List listings in your access scope',
          tags: ['Listings'],
          querystring: listingsQuery,
          response: { 200: listingListResponse, ...partnerErrors },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const query = request.query;
        const filter = await listings.filter(partner, query);
        const page = await listings.page(filter, query, { projection: json });
        return sendListingPage(reply, page, {
          partner: partnerMeta(partner),
          filters: appliedFilters(query),
        });
      },
    );

    /**
     * The id of the partner's own listing whose reference is this text, if it has one: a reference
     * shaped like a UUID is easily taken for the service's id (issue 41), and the 404 says so. Not
     * a leak: the listing is the partner's own, read through its own scope.
     */
    const ownByReference = async (partner: NonNullable<FastifyRequest['partner']>, reference: string) => {
      const query: ListingQuery = {
        page: 1,
        pageSize: 1,
        status: 'all',
        updatedSince: undefined,
        sort: '-updatedAt',
        dealerIds: [],
        parentDealerId: undefined,
        locationCode: undefined,
        cursor: undefined,
        mine: true,
        externalReference: reference,
      };
      const page = await listings.page(await listings.filter(partner, query), query);
      return page.data[0]?.id;
    };

    app.get(
      '/listings/:id',
      {
        config: {
          scope: 'read:listings',
          etag: true,
          documentedResponses: {
            304: 'Not Modified: your If-None-Match holds the current ETag; reuse your copy.',
          },
        },
        schema: {
          summary: 'Get one listing by its service UUID',
          description:
            'Answers with an ETag; send it back as If-None-Match to get 304 Not Modified while the listing (and its dealer) is unchanged, or as If-Match on a write (PUT, PATCH, status, DELETE) so that it applies only to this version. Not your reference: to read by your own reference use GET /listings?externalReference=…&status=all.',
          tags: ['Listings'],
          params: z.object({ id: listingIdParam }),
          response: {
            200: z.object({ data: listingSchema, meta: singleMeta }),
            ...partnerErrors,
          },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        // The id lower-cased to read by it; the text as received to look for a reference equal to it.
        const listing = await listings.get(request.params.id.toLowerCase(), modeOf(partner), json);
        // Outside the scope looks exactly like absent: ids of other partners' listings are not confirmed.
        if (!listing || !inScope(partner.access, listing.dealerId)) {
          throw notFound(
            messages.listingIdNotFound(request.params.id, await ownByReference(partner, request.params.id)),
          );
        }
        // The ETag covers everything shown (the dealer's details too), so a 304 is never stale.
        // The same version a write's If-Match is compared with (domain/etag.ts).
        const etag = listingEtag(listing.json);
        reply.header('ETag', etag).header('Cache-Control', 'private, no-cache');
        if (matchesEtag(request.headers['if-none-match'], etag))
          return (reply as FastifyReply).code(304).send(); // no body, so no schema
        const meta = singleMeta.parse({ partner: partnerMeta(partner) });
        return sendJson(reply, `{"data":${listing.json},"meta":${JSON.stringify(meta)}}`);
      },
    );
  };
}

/** If-None-Match: a list of (possibly weak) tags, or "*". */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

/** meta.filters: what the list was filtered by, every value resolved from its alias. */
export function appliedFilters(query: {
  status: string;
  updatedSince: Date | undefined;
  sort: string;
  dealerIds?: string[];
  parentDealerId?: string | undefined;
  locationCode: string | undefined;
  includeChildren?: boolean;
  mine: boolean;
  externalReference?: string | undefined;
  readiness?: string | undefined;
  imageState?: string | undefined;
}) {
  return {
    status: query.status,
    updatedSince: query.updatedSince?.toISOString() ?? null,
    sort: query.sort,
    ...(query.dealerIds ? { dealerIds: query.dealerIds } : {}),
    ...(query.parentDealerId !== undefined || query.dealerIds
      ? { parentDealerId: query.parentDealerId ?? null }
      : {}),
    locationCode: query.locationCode ?? null,
    ...(query.includeChildren !== undefined ? { includeChildren: query.includeChildren } : {}),
    ...(query.mine ? { mine: true } : {}),
    ...(query.externalReference !== undefined ? { externalReference: query.externalReference } : {}),
    // Only when set, as the cursor's fingerprint has them (found by review, 2026-11-30: a list
    // filtered by either did not say so).
    ...(query.readiness !== undefined ? { readiness: query.readiness } : {}),
    ...(query.imageState !== undefined ? { imageState: query.imageState } : {}),
  };
}

const listPageRest = listingListResponse.omit({ data: true });

/**
 * Sends a page of listings as the read model stores them (store/listings/json.ts): the listings' text is
 * spliced in as it is; pagination and meta go through their schema like any other response.
 */
export function sendListingPage(
  reply: FastifyReply,
  page: { data: ListingJson[]; pagination: z.input<typeof paginationSchema> },
  meta: z.input<typeof listingListResponse>['meta'],
): FastifyReply {
  const rest = listPageRest.parse({ pagination: page.pagination, meta });
  return sendList(
    reply,
    page.data.map((listing) => listing.json),
    rest,
  );
}
