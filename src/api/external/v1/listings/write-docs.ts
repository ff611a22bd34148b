import { z } from 'zod';
import { ENUMS } from '../../../../domain/enums.js';
import { listingWriteExample } from '../../../../domain/listings/example.js';
import { caseInsensitive } from '../../../../domain/listings/field-types.js';
import { listingBodySchema, referenceSchema } from '../../../../domain/listings/input.js';

/**
 * Request bodies of the write operations, for the OpenAPI document only. The domain validates
 * bodies itself (a bulk request reports each item on its own), from the same listingBodySchema,
 * so the document shows exactly what is checked. Built once per process: Zod's registry allows
 * one schema per component id.
 */
const example = listingWriteExample;

const reference = referenceSchema;

export const listingWriteDoc = listingBodySchema({ historyReportHosts: ['www.car-pass.be'] })
  .extend({
    externalReference: reference
      .optional()
      .describe(
        'Your reference. In a PUT or PATCH the path names it: the body may leave it out or repeat it, and any other value is refused (VALIDATION_FAILED, reference_mismatch: a reference cannot change). In bulk items it is required. Alias: external_reference (when both are sent, they must be equal).',
      ),
    external_reference: z.string().optional().describe('Alias of externalReference.'),
  })
  .meta({
    id: 'ListingWrite',
    description:
      'A listing as you send it. title is always required. Rules across fields, which the service checks: ' +
      'a listing on offer (status active or pending) needs a price, and a new listing without a status becomes ' +
      'active, so it needs a price unless you send status sold or draft; a new listing needs dealerProfileId or ' +
      'dealerLocationCode unless your secret has exactly one root profile; dealerProfileId wins over ' +
      'dealerLocationCode. Fields you leave out are cleared on an update (a PUT replaces the listing). Enumerated ' +
      'fields accept the values and aliases of GET /reference/enums, case-insensitively. Read-only fields (id, ' +
      'slug, createdAt, …) are accepted and ignored; an unknown field is refused (VALIDATION_FAILED, ' +
      'unknown_field, with the closest known name).',
    examples: [example],
  });

const { externalReference: _ref, ...single } = example;

export const putExamples = {
  listing: { summary: 'A used car at a location, by location code', value: single },
  minimal: {
    summary: 'The least a new listing needs',
    value: { dealerLocationCode: 'VDB-GENT', title: 'Peugeot 208 1.2 PureTech 2019', price: 12450 },
  },
};

// Items as the service takes them: each is validated on its own, and an invalid one (even one
// that is not an object) gets its own entry in `errors` while the others are written. Described
// as ListingWrite items, a validating gateway would refuse the whole batch instead.
const bulkItem = z
  .unknown()
  .describe(
    'A listing as in PUT (the ListingWrite schema), with its externalReference. Validated one by one: an invalid item gets its own entry in errors; the others are still written.',
  );

export const bulkBodyDoc = z
  .union([z.array(bulkItem).min(1).max(100), z.strictObject({ items: z.array(bulkItem).min(1).max(100) })])
  .describe(
    'A JSON array of 1 to 100 listings, or {"items": [...]}. Each item needs externalReference (or external_reference).',
  );

export const bulkExamples = {
  array: {
    summary: 'Two listings as an array',
    value: [
      example,
      {
        externalReference: 'STOCK-2026-0043',
        dealerLocationCode: 'VDB-ANTW',
        title: 'Tesla Model 3 Long Range 2022',
        price: 33900,
        fuelType: 'EV',
      },
    ],
  },
  items: {
    summary: 'The same wrapped in {items}',
    value: {
      items: [
        {
          externalReference: 'STOCK-2026-0043',
          dealerLocationCode: 'VDB-ANTW',
          title: 'Tesla Model 3 Long Range 2022',
          price: 33900,
        },
      ],
    },
  },
};

export const statusBodyDoc = z.strictObject({
  status: z
    .string()
    .meta({ pattern: caseInsensitive(ENUMS.status.values) })
    .describe(`The new status: ${ENUMS.status.values.join(', ')} (any letter case).`),
});

export const statusExamples = {
  sold: { summary: 'Mark as sold', value: { status: 'sold' } },
  pending: { summary: 'Reserved by a buyer', value: { status: 'pending' } },
};

// A merge patch names only what changes; null clears. Documented as the write shape with every
// field optional (title may not be null: a listing always has one). The service validates the
// result, the stored listing with the patch applied, as a whole, like a PUT.
export const listingPatchDoc = listingBodySchema({ historyReportHosts: ['www.car-pass.be'] })
  .partial()
  .meta({
    id: 'ListingPatch',
    description:
      'A JSON Merge Patch (RFC 7396) of your listing: only the fields you send change; null clears an ' +
      'optional field; an array (images, features, conditionTags) replaces the whole array. The listing ' +
      'that results is validated as a whole, as in PUT: the same issues (unknown_field included), and the ' +
      'same rules across fields (a price for an active or pending listing). A patch that changes nothing ' +
      'answers outcome unchanged and leaves updatedAt as it was. The path names the listing: externalReference ' +
      '(or external_reference) may be left out or repeat it; any other value, null included, is refused ' +
      '(reference_mismatch: a reference cannot change).',
    examples: [{ price: 20950, mileage: 48900 }],
  });

export const patchExamples = {
  price: { summary: 'A new price and mileage', value: { price: 20950, mileage: 48900 } },
  clear: { summary: 'Clear the variant, reserve the car', value: { variant: null, status: 'pending' } },
};
