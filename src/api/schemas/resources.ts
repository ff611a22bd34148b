import { z } from 'zod';
import { ENUMS } from '../../domain/enums.js';
import { IMAGE_STATES } from '../../domain/images/classify.js';
import { IMAGE_FORMATS } from '../../domain/images/formats.js';

/** The shapes of the resources the API returns; types for the stores and schemas for the routes. */

const accessSchema = z.object({
  scope: z.enum(['global', 'restricted']),
  rootProfileIds: z.array(z.string()),
  profileIds: z.array(z.string()),
});

export const partnerMetaSchema = z.object({ id: z.string(), name: z.string(), access: accessSchema });

export const dealerSummarySchema = z.object({
  id: z.string(),
  locationCode: z.string(),
  companyName: z.string().nullable(),
  fullName: z.string().nullable(),
  displayName: z.string().nullable(),
});

const dealerFields = {
  id: z.string(),
  parentId: z.string().nullable(),
  locationCode: z.string(),
  companyName: z.string().nullable(),
  fullName: z.string().nullable(),
  displayName: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  address: z.string().nullable(),
  postalCode: z.string().nullable(),
  city: z.string().nullable(),
  province: z.string().nullable(),
  logoUrl: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  parent: dealerSummarySchema.nullable(),
};

export const dealerSchema = z.object(dealerFields).meta({ id: 'Dealer' });

export const locationSchema = z
  .object({
    ...dealerFields,
    isRoot: z.boolean(),
    stats: z
      .object({
        activeListings: z.number().int(),
        totalListings: z.number().int(),
        avgActivePrevMonth: z.number().optional(),
      })
      .optional(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Location' });

const problemSchema = z.object({ code: z.string(), message: z.string() });

/** An image's check (docs/images.md): pending until the first check, then what it found. */
export const imageCheckSchema = z
  .object({
    state: z.enum(IMAGE_STATES),
    checkedAt: z
      .string()
      .nullable()
      .describe('When this result was first found (ISO 8601); null while pending.'),
    format: z.enum(IMAGE_FORMATS).nullable(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
    contentType: z.string().nullable(),
    problem: problemSchema.nullable().describe('Why the image cannot be shown; null when ok or pending.'),
  })
  .meta({ id: 'ImageCheck' });

/** Whether a listing can be shown, and if not every reason (docs/images.md, "Readiness"). */
export const readinessSchema = z
  .object({
    live: z.boolean(),
    reasons: z.array(problemSchema).describe('Every reason it cannot be shown; empty when live.'),
  })
  .meta({ id: 'Readiness' });

/** The full listing read shape (docs/contract.md#one-listing). */
export const listingSchema = z
  .object({
    id: z.string(),
    slug: z.string(),
    listingUrl: z.string(),
    dealerProfileId: z.string(),
    externalReference: z.string(),
    externalProvider: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(ENUMS.status.values),
    price: z.number().nullable(),
    currency: z.string(),
    brand: z.string().nullable(),
    model: z.string().nullable(),
    variant: z.string().nullable(),
    year: z.number().int().nullable(),
    mileage: z.number().int().nullable(),
    fuelType: z.enum(ENUMS.fuelType.values).nullable(),
    transmission: z.enum(ENUMS.transmission.values).nullable(),
    bodyType: z.enum(ENUMS.bodyType.values).nullable(),
    color: z.string().nullable(),
    interiorColor: z.string().nullable(),
    interiorMaterial: z.enum(ENUMS.interiorMaterial.values).nullable(),
    paintType: z.enum(ENUMS.paintType.values).nullable(),
    doors: z.number().int().nullable(),
    seats: z.number().int().nullable(),
    gears: z.number().int().nullable(),
    previousOwners: z.number().int().nullable(),
    powerKw: z.number().int().nullable(),
    co2Emission: z.number().nullable(),
    co2Type: z.enum(ENUMS.co2Type.values).nullable(),
    emissionClass: z.enum(ENUMS.emissionClass.values).nullable(),
    firstRegistration: z.string().nullable().describe('YYYY-MM-DD'),
    driveType: z.enum(ENUMS.driveType.values).nullable(),
    weight: z.number().int().nullable(),
    fuelConsumption: z.number().nullable(),
    serviceHistory: z.boolean().nullable(),
    warranty: z.boolean().nullable(),
    warrantyMonths: z.number().int().nullable(),
    vehicleType: z.enum(ENUMS.vehicleType.values).nullable(),
    conditionTags: z.array(z.enum(ENUMS.conditionTags.values)),
    engine: z.string().nullable(),
    vin: z.string().nullable(),
    historyReportUrl: z.string().optional(),
    location: z.object({
      postalCode: z.string().nullable(),
      city: z.string().nullable(),
      province: z.string().nullable(),
      latitude: z.number().nullable(),
      longitude: z.number().nullable(),
    }),
    images: z.array(z.object({ url: z.string(), position: z.number().int(), check: imageCheckSchema })),
    mainImageUrl: z.string().nullable(),
    features: z.array(z.object({ category: z.string(), name: z.string() })),
    readiness: readinessSchema,
    dealer: dealerSchema,
    changedAt: z
      .string()
      .describe(
        'When the listing last changed in any way you see: your edit (then equal to updatedAt) or an image check’s result. The sync cursor follows it (docs/sync.md).',
      ),
    createdAt: z.string(),
    updatedAt: z.string().describe('Your last edit of the listing; an image check never moves it.'),
    soldAt: z.string().optional(),
  })
  .meta({ id: 'Listing' });
