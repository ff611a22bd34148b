import type { z } from 'zod';
import type { Projection } from '../../../store/db.js';
import { LISTING_FIELDS } from '../../../store/listing-columns.js';
import type { StoredListing } from '../../../store/listing-rows.js';
import { listingSchema } from '../../schemas/resources.js';

export type ListingView = z.output<typeof listingSchema>;

/** Fields the read shape nests under `location` rather than showing flat. */
const NESTED_IN_LOCATION = new Set(['postalCode', 'city', 'province', 'latitude', 'longitude']);

/**
 * A stored listing as partners read it (the spec's read shape): its public URL, the location
 * fields nested, images with their positions and the main image, timestamps as ISO strings.
 */
export type ListingViewer = (stored: StoredListing) => ListingView;

export function listingView(listingBaseUrl: string): ListingViewer {
  return (stored: StoredListing): ListingView => {
    const { values } = stored;
    const images = ((values.images as string[] | null) ?? []).map((url, position) => ({ url, position }));
    const flat: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(values)) {
      if (NESTED_IN_LOCATION.has(field) || field === 'images' || field === 'features') continue;
      // The spec shows historyReportUrl only "when provided"; every other field is always present.
      if (field === 'historyReportUrl' && value === null) continue;
      flat[field] = value;
    }
    return {
      id: stored.id,
      slug: stored.slug,
      listingUrl: `${listingBaseUrl}/${stored.slug}`,
      dealerProfileId: stored.dealer.id,
      externalReference: stored.externalReference,
      externalProvider: stored.externalProvider,
      status: stored.status,
      ...flat,
      location: {
        postalCode: values.postalCode,
        city: values.city,
        province: values.province,
        latitude: values.latitude,
        longitude: values.longitude,
      },
      images,
      mainImageUrl: images[0]?.url ?? null,
      features: (values.features as { category: string; name: string }[] | null) ?? [],
      dealer: stored.dealer,
      createdAt: stored.createdAt.toISOString(),
      updatedAt: stored.updatedAt.toISOString(),
      ...(stored.soldAt ? { soldAt: stored.soldAt.toISOString() } : {}),
    } as unknown as ListingView;
  };
}

/**
 * The same read shape, built by the database as JSON text: for pages, where mapping 50 rows of
 * 60 columns into objects, checking them against the schema and serializing them again cost
 * more service CPU than everything else of a request together (docs/benchmarks.md). Keys come in
 * the schema's order, as the serializer writes them; values are formatted as listingView formats
 * them (timestamps as toISOString does, to the millisecond; a numeric as a JSON number), and
 * the tests hold both to the same output (test/listing-json.test.ts).
 * Reads `l` (listings), `pa` (partners), `d` and `p` (the dealer and its parent): LISTING_JOINS.
 */
export function listingJsonSql(listingBaseUrl: string): string {
  const column = new Map<string, (typeof LISTING_FIELDS)[number]>(LISTING_FIELDS.map((f) => [f[0], f]));
  const value = (field: string): string => {
    const [, name, kind] = column.get(field)!;
    return kind === 'numeric' ? `l.${name}::float8` : `l.${name}`;
  };
  const special: Record<string, string> = {
    id: 'l.id',
    slug: 'l.slug',
    listingUrl: `${literal(`${listingBaseUrl}/`)} || l.slug`,
    dealerProfileId: 'l.dealer_profile_id',
    externalReference: 'l.external_reference',
    externalProvider: 'pa.name',
    status: 'l.status',
    location: `json_build_object(${['postalCode', 'city', 'province', 'latitude', 'longitude']
      .map((f) => `'${f}', ${value(f)}`)
      .join(', ')})`,
    images: `(SELECT coalesce(json_agg(json_build_object('url', i.url, 'position', i.n - 1) ORDER BY i.n), '[]')
      FROM jsonb_array_elements_text(l.images) WITH ORDINALITY AS i(url, n))`,
    mainImageUrl: 'l.images->>0',
    features: `(SELECT coalesce(json_agg(json_build_object('category', f.v->>'category', 'name', f.v->>'name') ORDER BY f.n), '[]')
      FROM jsonb_array_elements(l.features) WITH ORDINALITY AS f(v, n))`,
    dealer: `json_build_object(${DEALER_JSON})`,
    createdAt: isoTime('l.created_at'),
    updatedAt: isoTime('l.updated_at'),
  };
  // Shown only when there is one: a pair with its comma, or nothing.
  const optional: Record<string, string> = {
    historyReportUrl: 'l.history_report_url',
    soldAt: isoTime('l.sold_at'),
  };
  // concat() copies once and skips NULLs (an optional pair that is absent); it takes at most
  // 100 arguments, so the pairs go in groups.
  const args = Object.keys(listingSchema.shape).flatMap((key, i) => {
    const name = `'${i === 0 ? '{' : ','}"${key}":'`;
    if (key in optional) return [`${name} || to_json(${optional[key]})::text`];
    const sql = special[key] ?? (column.has(key) ? value(key) : undefined);
    if (sql === undefined) throw new Error(`listingJsonSql: no column for the field "${key}"`);
    return [name, `coalesce(to_json(${sql})::text, 'null')`];
  });
  const groups: string[] = [];
  for (let i = 0; i < args.length; i += 90) groups.push(`concat(${args.slice(i, i + 90).join(',\n')})`);
  return `concat(${groups.join(', ')}, '}')`;
}

export const DEALER_JSON = [
  `'id', d.id, 'parentId', d.parent_id, 'locationCode', d.location_code, 'companyName', d.company_name`,
  `'fullName', d.full_name, 'displayName', d.display_name, 'email', d.email, 'phone', d.phone`,
  `'address', d.address, 'postalCode', d.postal_code, 'city', d.city, 'province', d.province`,
  `'logoUrl', d.logo_url, 'metadata', coalesce(d.metadata, '{}'::jsonb)`,
  `'parent', CASE WHEN d.parent_id IS NULL THEN NULL ELSE json_build_object('id', d.parent_id,
    'locationCode', p.location_code, 'companyName', p.company_name, 'fullName', p.full_name,
    'displayName', p.display_name) END`,
].join(', ');

/** A timestamp as Date.toISOString writes it: UTC, milliseconds (truncated, as a JS Date holds them). */
export const isoTime = (sql: string) => `to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A string as an SQL literal (the base URL is configuration, but quoted all the same). */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** A listing as the database wrote its JSON, with its dealer for the scope check. */
export interface ListingJson {
  json: string;
  dealerId: string;
}

/** Reads listings as their finished JSON (listingJsonSql), for pages and single reads. */
export function listingJsonProjection(listingBaseUrl: string): Projection<ListingJson> {
  return {
    columns: `${listingJsonSql(listingBaseUrl)} AS json, l.dealer_profile_id AS json_dealer`,
    read: (row) => ({ json: row.json as string, dealerId: row.json_dealer as string }),
  };
}
