import { ENUMS } from '../../domain/enums.js';
import { priceIssue } from '../../domain/listings/checks.js';
import {
  dealer,
  GROUP_ID,
  LISTING_ID,
  LOCATION_ID,
  listing,
  REFERENCE,
} from '../../domain/listings/example.js';
import { messages } from '../../domain/messages.js';
import { REQUEST_RESPONSE_EXAMPLES } from './request-examples.js';
import { WEBHOOK_RESPONSE_EXAMPLES } from './webhook-examples.js';

/**
 * Real examples for the reference page: one dealer group with a location, one listing as the
 * service shows it, and every operation's answer built from them, so the page never falls back
 * to generated placeholders ("string", -9007199254740991). test/openapi.test.ts validates each
 * example against the schema it illustrates.
 */

type Example = { summary: string; value: unknown };

const partner = {
  id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  name: 'Acme DMS',
  access: { scope: 'restricted', rootProfileIds: [GROUP_ID], profileIds: [GROUP_ID, LOCATION_ID] },
};
const writer = { id: partner.id, name: partner.name };

const location = {
  ...dealer,
  isRoot: false,
  stats: { activeListings: 37, totalListings: 52, avgActivePrevMonth: 35.4 },
  updatedAt: '2026-09-14T10:02:11.000Z',
};

const page = (items: unknown[]) => ({
  data: items,
  pagination: {
    page: 1,
    pageSize: 50,
    totalItems: 37,
    totalPages: 1,
    nextCursor:
      'eyJ2IjoxLCJwIjpbIjIwMjYtMTEtMjFUMTY6NDA6MjcuMDkwMDAwWiIsIjNmMGMyYThlIl0sImYiOiJhYmMifQ.Xq2b9WkL0pR7sT1uV3wY5zA8cD2eF4gH',
    hasMore: false,
  },
  meta: { partner, filters: { status: 'active', sort: 'updatedAt' } },
});

const written = (outcome: 'created' | 'updated' | 'unchanged') => ({
  data: {
    listingId: LISTING_ID,
    externalReference: REFERENCE,
    status: 'active',
    created: outcome === 'created',
    outcome,
  },
  meta: { partner: writer },
});

const sold = {
  data: { listingId: LISTING_ID, externalReference: REFERENCE, status: 'sold', outcome: 'updated' },
  meta: { partner: writer },
};

/** A dry run of a new reference: what it would do; no id, since nothing exists yet. */
const wouldCreate = {
  data: {
    listingId: null,
    externalReference: REFERENCE,
    status: 'active',
    created: false,
    outcome: 'would_create',
    dryRun: true,
  },
  meta: { partner: writer, dryRun: true },
};

/** Success answers by operationId and status. */
export const RESPONSE_EXAMPLES: Record<string, Record<number, Record<string, Example>>> = {
  listListings: {
    200: {
      page: { summary: 'The first page, sorted by updatedAt (with a sync cursor)', value: page([listing]) },
    },
  },
  getListing: { 200: { listing: { summary: 'One listing', value: { data: listing, meta: { partner } } } } },
  upsertListing: {
    200: {
      updated: { summary: 'The listing existed and changed', value: written('updated') },
      unchanged: { summary: 'Sent again unchanged: updatedAt did not move', value: written('unchanged') },
      dryRun: {
        summary: 'A dry run (?dryRun=true) of a new reference: what it would do, nothing written',
        value: wouldCreate,
      },
    },
    201: { created: { summary: 'A new reference', value: written('created') } },
  },
  patchListing: {
    200: {
      updated: { summary: 'The patch changed the listing', value: written('updated') },
      unchanged: {
        summary: 'The fields already had these values: updatedAt did not move',
        value: written('unchanged'),
      },
    },
  },
  bulkUpsertListings: {
    200: {
      mixed: {
        summary: 'Two written, one refused (with the field and the rule)',
        value: {
          data: {
            successCount: 2,
            errorCount: 1,
            results: [
              {
                index: 0,
                listingId: LISTING_ID,
                externalReference: REFERENCE,
                status: 'active',
                created: false,
                outcome: 'updated',
              },
              {
                index: 2,
                listingId: '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f',
                externalReference: 'STOCK-2026-0044',
                status: 'active',
                created: true,
                outcome: 'created',
              },
            ],
            errors: [
              {
                index: 1,
                externalReference: 'STOCK-2026-0043',
                code: 'VALIDATION_FAILED',
                message: messages.invalidListing([priceIssue('active')]),
                status: 422,
                issues: [priceIssue('active')],
              },
            ],
          },
          meta: { partner: writer },
        },
      },
    },
  },
  setListingStatus: {
    200: {
      sold: {
        summary: 'Now sold',
        value: sold,
      },
    },
  },
  markListingSold: {
    200: {
      sold: {
        summary: 'Marked as sold (again: idempotent)',
        value: sold,
      },
    },
  },
  listLocations: {
    200: {
      roots: {
        summary: 'Your locations, with counts',
        value: {
          data: [location],
          meta: {
            total: 1,
            profileIds: partner.access.profileIds,
            rootProfileIds: partner.access.rootProfileIds,
            filters: { parentId: null, search: null },
            partner,
          },
        },
      },
    },
  },
  getLocation: {
    200: { location: { summary: 'One location', value: { data: location, meta: { partner } } } },
  },
  listLocationListings: {
    200: {
      page: {
        summary: "A location's listings",
        value: {
          ...page([listing]),
          meta: { partner, filters: { locationId: LOCATION_ID, status: 'active' } },
        },
      },
    },
  },
  getEnums: {
    200: {
      enums: {
        summary: 'Every enumeration (this is the real answer)',
        value: { data: ENUMS, meta: { partner } },
      },
    },
  },
  ...WEBHOOK_RESPONSE_EXAMPLES,
  ...REQUEST_RESPONSE_EXAMPLES,
  wipeTestData: {
    200: { wiped: { summary: 'Your test listings deleted', value: { data: { deleted: 412 } } } },
  },
};
