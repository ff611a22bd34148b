import { z } from 'zod';
import { LISTING_FIELDS, type ListingFieldName } from '../../store/listings/columns.js';
import type { ENUMS } from '../enums.js';
import { messages } from '../messages.js';
import {
  bool,
  caseInsensitive,
  decimal,
  enumField,
  feature,
  firstRegistration,
  historyReport,
  image,
  int,
  isStorableText,
  NON_BLANK_LISTING_TEXT_PATTERN,
  STORABLE_MESSAGE,
  text,
  VIN_PATTERN,
} from './field-types.js';

/**
 * The listing write shape: validation and normalisation of one listing as a partner sends it
 * (PUT body or bulk item). One schema serves validation, the TypeScript type and the OpenAPI
 * document. Bounds are those of docs/contract.md#validation.
 */

export type Status = (typeof ENUMS.status.values)[number];

// The reference rule and storable text live with the field types; importers know them from here.
export { isStorableText, isValidReference, referenceRule, referenceSchema } from './field-types.js';

interface ListingSchemaOptions {
  historyReportHosts: readonly string[];
  today?: () => Date;
}

/** A latitude (90) or longitude (180): its range named in the message as numbers. */
const coordinate = (bound: number) =>
  z
    .number({ error: 'must be a number' })
    .min(-bound, messages.between(-bound, bound))
    .max(bound, messages.between(-bound, bound))
    .nullable()
    .optional();

/** The fields of a listing body, before aliases are folded in. */
export function listingBodySchema(options: ListingSchemaOptions) {
  const today = options.today ?? (() => new Date());
  const maxYear = () => today().getUTCFullYear() + 1;
  const historyReportUrl = historyReport(options.historyReportHosts);
  // Strict: a name that is none of these is refused (unknown_field), never dropped.
  return z.strictObject({
    externalReference: z.unknown().optional(),
    external_reference: z.unknown().optional(),
    dealerProfileId: z.uuid({ error: 'must be a UUID' }).toLowerCase().nullable().optional(),
    dealerLocationCode: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1)
      .max(64)
      .refine(isStorableText, STORABLE_MESSAGE)
      .meta({ pattern: NON_BLANK_LISTING_TEXT_PATTERN })
      .nullable()
      .optional(),
    status: enumField('status'),
    title: z
      .string({ error: 'is required and must be a string' })
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .refine(isStorableText, STORABLE_MESSAGE)
      .meta({
        pattern: NON_BLANK_LISTING_TEXT_PATTERN,
        description: 'Required: 1 to 200 characters, not only spaces.',
      }),
    description: text(20_000),
    price: decimal(0, 10_000_000, true),
    currency: z
      .string({ error: 'must be a string' })
      .trim()
      .toUpperCase()
      .refine((v) => v === 'EUR', 'only EUR is supported')
      .meta({ pattern: caseInsensitive(['EUR']), description: 'EUR, the only currency (the default).' })
      .nullable()
      .optional(),
    brand: text(100),
    model: text(100),
    variant: text(200),
    year: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      // The bound named as a number ("between 1900 and 2027"), computed when the value is checked.
      .superRefine((v, ctx) => {
        const max = maxYear();
        if (v < 1900 || v > max) ctx.addIssue({ code: 'custom', message: messages.yearRange(max) });
      })
      .meta({
        minimum: 1900,
        // No maximum in the document: the bound moves every 1 January, the document does not.
        description:
          'From 1900 to next year (a bound that moves each 1 January, so said here, not as a maximum).',
      })
      .nullable()
      .optional(),
    mileage: int(0, 2_000_000),
    fuelType: enumField('fuelType'),
    transmission: enumField('transmission'),
    bodyType: enumField('bodyType'),
    color: text(100),
    interiorColor: text(100),
    interiorMaterial: enumField('interiorMaterial'),
    paintType: enumField('paintType'),
    doors: int(0, 10),
    seats: int(0, 100),
    gears: int(0, 20),
    previousOwners: int(0, 100),
    powerKw: int(1, 2_000),
    co2Emission: decimal(0, 1_000),
    co2Type: enumField('co2Type'),
    emissionClass: enumField('emissionClass'),
    firstRegistration: firstRegistration(today),
    driveType: enumField('driveType'),
    weight: int(1, 100_000),
    fuelConsumption: decimal(0, 100),
    serviceHistory: bool,
    warranty: bool,
    warrantyMonths: int(0, 240),
    vehicleType: enumField('vehicleType'),
    conditionTags: z
      .array(enumField('conditionTags'), { error: 'must be an array' })
      .max(20, 'at most 20 condition tags')
      .nullable()
      .optional(),
    engine: text(200),
    vin: z
      .string({ error: 'must be a string' })
      .trim()
      .toUpperCase()
      .refine(
        (v) => v === '' || VIN_PATTERN.test(v),
        '17 characters of A-H, J-N, P, R-Z and 0-9 (no I, O or Q)',
      )
      .transform((v) => v || null)
      .meta({
        pattern: '^\\s*([A-HJ-NPR-Za-hj-npr-z0-9]{17})?\\s*$',
        description: 'The 17-character VIN (no I, O or Q; any letter case); empty clears it.',
      })
      .nullable()
      .optional(),
    historyReportUrl,
    historyReport: historyReportUrl,
    history_report_url: historyReportUrl,
    historyReportNumber: historyReportUrl,
    postalCode: text(20),
    city: text(100),
    province: text(100),
    latitude: coordinate(90),
    longitude: coordinate(180),
    // The read shape nests these; accepting it too lets a partner send back what it read.
    location: z
      .strictObject({
        postalCode: text(20),
        city: text(100),
        province: text(100),
        latitude: coordinate(90),
        longitude: coordinate(180),
      })
      .nullable()
      .optional(),
    images: z
      .array(image, { error: 'must be an array of URLs' })
      .max(50, 'at most 50 images')
      .nullable()
      .optional(),
    features: z
      .array(feature, { error: 'must be an array' })
      .max(200, 'at most 200 features')
      .nullable()
      .optional(),
    ...readOnlyFields,
  });
}

/**
 * Fields of the read shape that a write ignores (docs/contract.md#put-replaces): a listing read
 * back can be sent back as it is. Declared so that they are known names, not unknown_field issues.
 */
export const READ_ONLY_FIELDS = [
  'id',
  'slug',
  'listingUrl',
  'externalProvider',
  'dealer',
  'createdAt',
  'updatedAt',
  'soldAt',
  'mainImageUrl',
  'readiness',
  'changedAt',
] as const;
const readOnlyFields = Object.fromEntries(
  READ_ONLY_FIELDS.map((name) => [
    name,
    z
      .unknown()
      .optional()
      .describe('Read-only: accepted and ignored, so a listing read back can be sent back as it is.'),
  ]),
) as {
  [K in (typeof READ_ONLY_FIELDS)[number]]: z.ZodOptional<z.ZodUnknown>;
};

type ListingBody = z.output<ReturnType<typeof listingBodySchema>>;

/** A validated listing, ready for the store: every writable field, null where cleared. */
export interface ListingWrite {
  values: Record<ListingFieldName, unknown>;
  /** undefined: keep the current status (a new listing becomes active). */
  status: Status | undefined;
  dealer: { id: string } | { code: string } | undefined;
}

const FIELD_NAMES = LISTING_FIELDS.map(([field]) => field);

/** Folds aliases and the nested location into the flat write shape; canonical names win. */
export function toListingWrite(body: ListingBody): ListingWrite {
  const location = body.location ?? {};
  // A plain loop and `??` chains: this runs for every item of a bulk (100 a request), where
  // Object.fromEntries and a variadic pick cost 6.7 µs an item (bench/results/
  // 2026-11-30-bulk-input.txt).
  const given = body as Record<string, unknown>;
  // Every field is the body's value, or null when left out (replace semantics)...
  const values = {} as Record<ListingFieldName, unknown>;
  for (const field of FIELD_NAMES) values[field] = given[field] ?? null;
  // ...except these, which fold aliases, the nested location and defaults.
  values.currency = body.currency ?? 'EUR';
  values.conditionTags = dedupe(
    (body.conditionTags ?? []).filter((t): t is string => !!t),
    (t) => t,
  );
  values.historyReportUrl =
    body.historyReportUrl ??
    body.historyReport ??
    body.history_report_url ??
    body.historyReportNumber ??
    null;
  values.postalCode = body.postalCode ?? location.postalCode ?? null;
  values.city = body.city ?? location.city ?? null;
  values.province = body.province ?? location.province ?? null;
  values.latitude = body.latitude ?? location.latitude ?? null;
  values.longitude = body.longitude ?? location.longitude ?? null;
  values.images = imageUrls(body.images ?? []);
  values.features = dedupe(
    body.features ?? [],
    (f) => `${f.category.toLowerCase()}\u0000${f.name.toLowerCase()}`,
  );
  return {
    values,
    status: (body.status ?? undefined) as Status | undefined,
    dealer: body.dealerProfileId
      ? { id: body.dealerProfileId }
      : body.dealerLocationCode
        ? { code: body.dealerLocationCode }
        : undefined,
  };
}

/** Image URLs in their positions' order (an image's position defaults to its index). */
function imageUrls(images: NonNullable<ListingBody['images']>): string[] {
  // Plain URLs, the usual form, are in order already.
  if (images.every((img) => typeof img === 'string')) return images as string[];
  return images
    .map((img, i) =>
      typeof img === 'string' ? { url: img, position: i } : { url: img.url, position: img.position ?? i },
    )
    .sort((a, b) => a.position - b.position)
    .map((img) => img.url);
}

function dedupe<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
