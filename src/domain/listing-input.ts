import { z } from 'zod';
import { ENUMS, type EnumName, matchEnum, refusalOf } from './enums.js';
import type { ListingFieldName } from './listing-fields.js';

/**
 * The listing write shape: validation and normalisation of one listing as a partner sends it
 * (PUT body or bulk item). One schema serves validation, the TypeScript type and the OpenAPI
 * document. Bounds are those of decisions.md ("Writing").
 */

export type Status = (typeof ENUMS.status.values)[number];

const REFERENCE_RULE = 'must be 1 to 128 characters, without control characters or leading/trailing spaces';

/** A partner's reference: 1 to 128 characters, no control characters, no outer white space. */
export function isValidReference(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= 128 &&
    value === value.trim() &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
    !/[\u0000-\u001f\u007f-\u009f]/.test(value) &&
    // Fix (write tests): a bulk item's reference with an unpaired surrogate ("\ud800" in JSON) passed
    // and then broke the jsonb batch parameter: a 500 instead of INVALID_REFERENCE.
    isStorableText(value)
  );
}
export const referenceRule = REFERENCE_RULE;

/**
 * Text PostgreSQL can store. JSON may carry U+0000 and unpaired UTF-16 surrogates as escapes, but
 * PostgreSQL text and jsonb reject both. Fix (write tests): such a string in any stored field (or in
 * dealerLocationCode, used in a lookup) made the write fail with 500 SERVER_ERROR; it is now an
 * ordinary validation failure of that field.
 */
export function isStorableText(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must be refused
  return !/\u0000|\p{Cs}/u.test(value);
}
const STORABLE_MESSAGE = 'must not contain U+0000 or unpaired surrogate characters';

const text = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .refine(isStorableText, STORABLE_MESSAGE)
    .transform((v) => v.trim() || null)
    .nullable()
    .optional();

const int = (min: number, max: number) =>
  z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`)
    .nullable()
    .optional();

// Fix (write tests): the 2-decimal check tolerates binary floating-point noise (0.1 + 0.2 is
// 0.30000000000000004), but the value itself used to go to the database unrounded. So a price of
// 1e-9 passed "> 0" and was stored as 0.00, and a noisy price differed from the stored numeric(12,2)
// on every resend: outcome "updated" and a new updatedAt each time. The value is now rounded to the
// cent first, and the bounds apply to what is stored.
const toCents = (v: number) => Math.round(v * 100) / 100;
const decimal = (min: number, max: number, exclusiveMin = false) =>
  z
    .number({ error: 'must be a number' })
    .refine((v) => Math.abs(Math.round(v * 100) - v * 100) < 1e-6, 'must have at most 2 decimals')
    .transform(toCents)
    .refine((v) => (exclusiveMin ? v > min : v >= min) && v <= max, {
      message: `must be ${exclusiveMin ? 'greater than' : 'at least'} ${min} and at most ${max}`,
    })
    .nullable()
    .optional();

const bool = z.boolean({ error: 'must be true or false' }).nullable().optional();

function enumField(name: EnumName) {
  const allowed = ENUMS[name].values.join(', ');
  return z
    .string({ error: `must be a string, one of: ${allowed}` })
    .transform((raw, ctx) => {
      if (raw.trim() === '') return null;
      const refusal = refusalOf(name, raw);
      if (refusal) {
        ctx.addIssue({
          code: 'custom',
          message: `"${raw.slice(0, 50)}" ${refusal}`,
          params: { code: 'ambiguous_value' },
        });
        return z.NEVER;
      }
      const value = matchEnum(name, raw);
      if (value === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `"${raw.slice(0, 50)}" is not allowed; allowed: ${allowed}`,
        });
        return z.NEVER;
      }
      return value;
    })
    .nullable()
    .optional()
    .describe(`One of: ${allowed}. Case-insensitive; aliases: GET /reference/enums.`);
}

const httpUrl = z
  .string({ error: 'must be a URL string' })
  .trim()
  .max(2048, 'must be at most 2048 characters')
  .refine(isStorableText, STORABLE_MESSAGE)
  .refine((v) => {
    try {
      const url = new URL(v);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

const image = z.union([
  httpUrl,
  z.strictObject({ url: httpUrl, position: z.number().int().min(0).optional() }),
]);

const feature = z.union([
  z
    .string({ error: 'must be a string or {category, name}' })
    .trim()
    .min(1, 'must not be empty')
    .max(200, 'must be at most 200 characters')
    .refine(isStorableText, STORABLE_MESSAGE)
    .transform((name) => ({ category: 'other', name })),
  z.strictObject({
    category: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .refine(isStorableText, STORABLE_MESSAGE),
    name: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .refine(isStorableText, STORABLE_MESSAGE),
  }),
]);

const VIN_PATTERN = /^[A-HJ-NPR-Z0-9]{17}$/;

function firstRegistration(today: () => Date) {
  return z
    .string({ error: 'must be a date string YYYY-MM or YYYY-MM-DD' })
    .trim()
    .transform((raw, ctx) => {
      const match = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(raw);
      const iso = match ? `${match[1]}-${match[2]}-${match[3] ?? '01'}` : '';
      const date = new Date(`${iso}T00:00:00Z`);
      if (!match || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== iso) {
        ctx.addIssue({ code: 'custom', message: 'must be a date YYYY-MM or YYYY-MM-DD' });
        return z.NEVER;
      }
      if (iso > today().toISOString().slice(0, 10)) {
        ctx.addIssue({ code: 'custom', message: 'must not be in the future' });
        return z.NEVER;
      }
      return iso;
    })
    .nullable()
    .optional();
}

function historyReport(hosts: readonly string[]) {
  return z
    .string({ error: 'must be a string' })
    .trim()
    .max(2048, 'must be at most 2048 characters')
    .transform((raw, ctx) => {
      if (raw === '') return null;
      if (/^\d{11}$/.test(raw)) return raw;
      let url: URL | undefined;
      try {
        url = new URL(raw);
      } catch {}
      if (url?.protocol !== 'https:' || !hosts.includes(url.hostname.toLowerCase())) {
        ctx.addIssue({
          code: 'custom',
          message: `must be an https URL on ${hosts.join(' or ')}, or an 11-digit certificate number`,
        });
        return z.NEVER;
      }
      return url.toString();
    })
    .nullable()
    .optional();
}

export interface ListingSchemaOptions {
  historyReportHosts: readonly string[];
  today?: () => Date;
}

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
      .nullable()
      .optional(),
    status: enumField('status'),
    title: z
      .string({ error: 'is required and must be a string' })
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .refine(isStorableText, STORABLE_MESSAGE),
    description: text(20_000),
    price: decimal(0, 10_000_000, true),
    currency: z
      .string({ error: 'must be a string' })
      .trim()
      .toUpperCase()
      .refine((v) => v === 'EUR', 'only EUR is supported')
      .nullable()
      .optional(),
    brand: text(100),
    model: text(100),
    variant: text(200),
    year: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .refine((v) => v >= 1900 && v <= maxYear(), { message: 'must be between 1900 and next year' })
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
      .max(20)
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
      .nullable()
      .optional(),
    historyReportUrl,
    historyReport: historyReportUrl,
    history_report_url: historyReportUrl,
    historyReportNumber: historyReportUrl,
    postalCode: text(20),
    city: text(100),
    province: text(100),
    latitude: z.number({ error: 'must be a number' }).min(-90).max(90).nullable().optional(),
    longitude: z.number({ error: 'must be a number' }).min(-180).max(180).nullable().optional(),
    // The read shape nests these; accepting it too lets a partner send back what it read.
    location: z
      .strictObject({
        postalCode: text(20),
        city: text(100),
        province: text(100),
        latitude: z.number().min(-90).max(90).nullable().optional(),
        longitude: z.number().min(-180).max(180).nullable().optional(),
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
 * Fields of the read shape that a write ignores (decisions.md): a listing read back can be sent
 * back as it is. Declared so that they are known names, not unknown_field issues.
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

export type ListingBody = z.output<ReturnType<typeof listingBodySchema>>;

/** A validated listing, ready for the store: every writable field, null where cleared. */
export interface ListingWrite {
  values: Record<ListingFieldName, unknown>;
  /** undefined: keep the current status (a new listing becomes active). */
  status: Status | undefined;
  dealer: { id: string } | { code: string } | undefined;
}

/** Folds aliases and the nested location into the flat write shape; canonical names win. */
export function toListingWrite(body: ListingBody): ListingWrite {
  const location = body.location ?? {};
  const images = (body.images ?? [])
    .map((img, i) =>
      typeof img === 'string' ? { url: img, position: i } : { url: img.url, position: img.position ?? i },
    )
    .sort((a, b) => a.position - b.position)
    .map((img) => img.url);
  const features = dedupe(
    body.features ?? [],
    (f) => `${f.category.toLowerCase()}\u0000${f.name.toLowerCase()}`,
  );
  const pick = <T>(...values: (T | null | undefined)[]) =>
    values.find((v) => v !== undefined && v !== null) ?? null;
  const values: Record<ListingFieldName, unknown> = {
    title: body.title,
    description: body.description ?? null,
    price: body.price ?? null,
    currency: body.currency ?? 'EUR',
    brand: body.brand ?? null,
    model: body.model ?? null,
    variant: body.variant ?? null,
    year: body.year ?? null,
    mileage: body.mileage ?? null,
    fuelType: body.fuelType ?? null,
    transmission: body.transmission ?? null,
    bodyType: body.bodyType ?? null,
    color: body.color ?? null,
    interiorColor: body.interiorColor ?? null,
    interiorMaterial: body.interiorMaterial ?? null,
    paintType: body.paintType ?? null,
    doors: body.doors ?? null,
    seats: body.seats ?? null,
    gears: body.gears ?? null,
    previousOwners: body.previousOwners ?? null,
    powerKw: body.powerKw ?? null,
    co2Emission: body.co2Emission ?? null,
    co2Type: body.co2Type ?? null,
    emissionClass: body.emissionClass ?? null,
    firstRegistration: body.firstRegistration ?? null,
    driveType: body.driveType ?? null,
    weight: body.weight ?? null,
    fuelConsumption: body.fuelConsumption ?? null,
    serviceHistory: body.serviceHistory ?? null,
    warranty: body.warranty ?? null,
    warrantyMonths: body.warrantyMonths ?? null,
    vehicleType: body.vehicleType ?? null,
    conditionTags: dedupe(
      (body.conditionTags ?? []).filter((t): t is string => !!t),
      (t) => t,
    ),
    engine: body.engine ?? null,
    vin: body.vin ?? null,
    historyReportUrl: pick(
      body.historyReportUrl,
      body.historyReport,
      body.history_report_url,
      body.historyReportNumber,
    ),
    postalCode: pick(body.postalCode, location.postalCode),
    city: pick(body.city, location.city),
    province: pick(body.province, location.province),
    latitude: pick(body.latitude, location.latitude),
    longitude: pick(body.longitude, location.longitude),
    images,
    features,
  };
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

function dedupe<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
