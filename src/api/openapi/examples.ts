import { ENUMS } from '../../domain/enums.js';
import { ERROR_CODES, type ErrorCodeName } from './error-codes.js';
import { REQUEST_RESPONSE_EXAMPLES } from './request-examples.js';
import { WEBHOOK_RESPONSE_EXAMPLES } from './webhook-examples.js';

/**
 * Real examples for the reference page: one dealer group with a location, one listing as the
 * service shows it, and every operation's answer built from them, so the page never falls back
 * to generated placeholders ("string", -9007199254740991). test/openapi.test.ts validates each
 * example against the schema it illustrates.
 */

type Example = { summary: string; value: unknown };

const REQUEST_ID = '6f1c2b0e-8d4a-4e7b-9c1d-2a3b4c5d6e7f';
const GROUP_ID = '0b7c1e9a-3f2d-4a5b-8c6d-7e8f9a0b1c2d';
const LOCATION_ID = '5d2a8f31-9c4e-4b7a-a1d3-6e0f2b8c4a97';
const LISTING_ID = '3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c';

const dealer = {
  id: LOCATION_ID,
  parentId: GROUP_ID,
  locationCode: 'VDB-GENT',
  companyName: 'Vandenberghe Auto NV',
  fullName: 'Vandenberghe Auto Gent',
  displayName: 'Vandenberghe Gent',
  email: 'gent@vandenberghe-auto.example',
  phone: '+32 9 123 45 67',
  address: 'Kortrijksesteenweg 1040',
  postalCode: '9051',
  city: 'Gent',
  province: 'Oost-Vlaanderen',
  logoUrl: 'https://cdn.vandenberghe-auto.example/logo.png',
  metadata: { dmsId: 'VDB-02' },
  parent: {
    id: GROUP_ID,
    locationCode: 'VDB',
    companyName: 'Vandenberghe Auto NV',
    fullName: 'Vandenberghe Auto Groep',
    displayName: 'Vandenberghe',
  },
};

const partner = {
  id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  name: 'Acme DMS',
  access: { scope: 'restricted', rootProfileIds: [GROUP_ID], profileIds: [GROUP_ID, LOCATION_ID] },
};
const writer = { id: partner.id, name: partner.name };

export const listing = {
  id: LISTING_ID,
  slug: 'volkswagen-golf-1-5-tsi-life-2021-k3f9x2qa',
  listingUrl: 'https://www.marketplace.example/listings/volkswagen-golf-1-5-tsi-life-2021-k3f9x2qa',
  dealerProfileId: LOCATION_ID,
  externalReference: 'STOCK-2026-0042',
  externalProvider: 'Acme DMS',
  title: 'Volkswagen Golf 1.5 TSI Life 2021',
  description: 'First owner, full Volkswagen service history, winter tyres included.',
  status: 'active',
  price: 21950,
  currency: 'EUR',
  brand: 'Volkswagen',
  model: 'Golf',
  variant: '1.5 TSI Life',
  year: 2021,
  mileage: 48200,
  fuelType: 'petrol',
  transmission: 'manual',
  bodyType: 'hatchback',
  color: 'Moonstone Grey',
  interiorColor: 'black',
  interiorMaterial: 'cloth',
  paintType: 'metallic',
  doors: 5,
  seats: 5,
  gears: 6,
  previousOwners: 1,
  powerKw: 96,
  co2Emission: 128,
  co2Type: 'wltp',
  emissionClass: 'euro6d',
  firstRegistration: '2021-03-01',
  driveType: 'fwd',
  weight: 1320,
  fuelConsumption: 5.6,
  serviceHistory: true,
  warranty: true,
  warrantyMonths: 12,
  vehicleType: 'margin',
  conditionTags: ['used', 'accident_free'],
  engine: '1.5 TSI 130 hp',
  vin: 'WVWZZZCDZMW012345',
  historyReportUrl: 'https://www.car-pass.be/nl/rapport/CP-4521-7788',
  location: {
    postalCode: '9051',
    city: 'Gent',
    province: 'Oost-Vlaanderen',
    latitude: 51.0259,
    longitude: 3.6885,
  },
  images: [
    { url: 'https://images.example.com/stock-2026-0042/1.jpg', position: 0 },
    { url: 'https://images.example.com/stock-2026-0042/2.jpg', position: 1 },
  ],
  mainImageUrl: 'https://images.example.com/stock-2026-0042/1.jpg',
  features: [
    { category: 'comfort', name: 'Adaptive cruise control' },
    { category: 'other', name: 'Heated seats' },
  ],
  dealer,
  createdAt: '2026-10-02T08:14:03.512Z',
  updatedAt: '2026-11-21T16:40:27.090Z',
};

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
      'eyJ2IjoxLCJwIjpbIjIwMjYtMTEtMjFUMTY6NDA6MjcuMDkwMDAwWiIsIjNmMGMyYThlIl0sImYiOiJhYmMifQ.Xq2b9W',
    hasMore: false,
  },
  meta: { partner, filters: { status: 'active', sort: 'updatedAt' } },
});

const written = (outcome: 'created' | 'updated' | 'unchanged') => ({
  data: {
    listingId: LISTING_ID,
    externalReference: 'STOCK-2026-0042',
    status: 'active',
    created: outcome === 'created',
    outcome,
  },
  meta: { partner: writer },
});

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
    },
    201: { created: { summary: 'A new reference', value: written('created') } },
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
                externalReference: 'STOCK-2026-0042',
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
                message: 'Invalid listing: price is required when the status is active.',
                status: 422,
                issues: [
                  { path: 'price', message: 'is required when the status is active', code: 'required' },
                ],
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
        value: {
          data: { listingId: LISTING_ID, externalReference: 'STOCK-2026-0042', status: 'sold' },
          meta: { partner: writer },
        },
      },
    },
  },
  markListingSold: {
    200: {
      sold: {
        summary: 'Marked as sold (again: idempotent)',
        value: {
          data: { listingId: LISTING_ID, externalReference: 'STOCK-2026-0042', status: 'sold' },
          meta: { partner: writer },
        },
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
};

/** One realistic refusal per error code: the message and issues the service really writes. */
const ERROR_BODIES: Record<
  ErrorCodeName,
  { summary: string; message: string; issues?: { path: string; message: string; code: string }[] }
> = {
  INVALID_QUERY: {
    summary: 'A misspelt query parameter',
    message:
      'Invalid query: query.stauts is not a known parameter; did you mean `status`? (and 1 more issue).',
    issues: [
      {
        path: 'query.stauts',
        message: 'is not a known parameter; did you mean `status`?',
        code: 'unknown_parameter',
      },
      { path: 'query.pageSize', message: 'must be a whole number of at least 1', code: 'custom' },
    ],
  },
  INVALID_JSON: {
    summary: 'A body that is not JSON',
    message:
      "The request body is not valid JSON: Expected ',' or '}' after property value in JSON at position 41.",
  },
  INVALID_BODY: {
    summary: 'Not the object the operation needs',
    message: 'The request body must be a JSON object.',
  },
  INVALID_REFERENCE: {
    summary: 'A reference with an outer space',
    message:
      'externalReference must be 1 to 128 characters, without control characters or leading/trailing spaces.',
  },
  EMPTY_PAYLOAD: {
    summary: 'A bulk request without items',
    message: 'No items: the list of listings is empty.',
  },
  TOO_MANY_ITEMS: {
    summary: 'A bulk request over 100 items',
    message: '250 items sent; at most 100 per request. Split the feed into batches of 100.',
  },
  UNAUTHORIZED: {
    summary: 'An unknown or rotated secret',
    message:
      'The API secret is not recognized: it is well-formed, but unknown, rotated away or disabled. Ask the operator for a current secret.',
  },
  HTTPS_REQUIRED: {
    summary: 'Plain HTTP',
    message:
      'This API is served over HTTPS only. Resend the request to https:// (never send a secret over plain HTTP).',
  },
  INSUFFICIENT_SCOPE: {
    summary: 'A read-only secret writing',
    message:
      'This operation needs the scope "write:listings"; this API secret has: read:listings, read:locations.',
  },
  PROFILE_FORBIDDEN: {
    summary: 'A dealer outside your scope',
    message: 'Location code "DUPONT-LIEGE" is not in this API secret\'s access scope.',
  },
  NOT_FOUND: {
    summary: 'Unknown or outside your scope',
    message: `No listing ${LISTING_ID} in this API secret's access scope.`,
  },
  METHOD_NOT_ALLOWED: {
    summary: 'A method this path does not have',
    message: 'PATCH is not allowed here; allowed: GET, PUT, DELETE.',
  },
  PAYLOAD_TOO_LARGE: {
    summary: 'A body over 5 MiB',
    message: 'The request body is larger than the 5 MiB limit.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    summary: 'Not JSON',
    message: 'Request bodies must be sent as Content-Type: application/json.',
  },
  VALIDATION_FAILED: {
    summary: 'A misspelt field, next to the other issues of the listing',
    message:
      'Invalid listing: milage is not a known field; did you mean `mileage`?; year must be between 1900 and next year; price is required when the status is active.',
    issues: [
      { path: 'milage', message: 'is not a known field; did you mean `mileage`?', code: 'unknown_field' },
      { path: 'year', message: 'must be between 1900 and next year', code: 'custom' },
      { path: 'price', message: 'is required when the status is active', code: 'required' },
    ],
  },
  RATE_LIMITED: {
    summary: 'Over your requests per minute',
    message: 'Rate limit of 600 requests a minute exceeded for this partner; retry after 12 s.',
  },
  BAD_REQUEST: {
    summary: 'A malformed HTTP request',
    message: 'The request has both Content-Length and Transfer-Encoding.',
  },
  REQUEST_TIMEOUT: { summary: 'Too slow to arrive', message: 'The request did not arrive in time.' },
  URI_TOO_LONG: {
    summary: 'A request line over 16 KiB',
    message: 'The request line (path and query string) is too long.',
  },
  HEADERS_TOO_LARGE: {
    summary: 'Headers over 16 KiB',
    message: 'The request headers are too large (16 KiB in all).',
  },
  SERVER_ERROR: { summary: 'Our fault', message: 'An unexpected error occurred.' },
  SERVICE_UNAVAILABLE: { summary: 'Retry shortly', message: 'The database is unavailable; retry shortly.' },
  CONFLICT: {
    summary: 'The operator disabled this webhook endpoint',
    message:
      'The operator disabled this endpoint (disabled by the operator: answers 200 to everything without storing); only the operator can enable it again: contact them.',
  },
};

/** The examples of one error status: one per code that status may carry on this operation. */
export function errorExamples(status: number, write: boolean): Record<string, Example> {
  const entries = (Object.keys(ERROR_CODES) as ErrorCodeName[])
    .filter((code) => ERROR_CODES[code].status === status && (write || !ERROR_CODES[code].writeOnly))
    .map((code) => {
      const { summary, message, issues } = ERROR_BODIES[code];
      return [
        code,
        {
          summary: `${code}: ${summary}`,
          value: { error: { code, message, requestId: REQUEST_ID, ...(issues ? { issues } : {}) } },
        },
      ];
    });
  return Object.fromEntries(entries);
}
