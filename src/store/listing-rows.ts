import { LISTING_FIELDS } from '../domain/listing-fields.js';
import type { ListingDto } from '../domain/resources.js';
import { rowToDealer } from './dealers.js';

/** Every column a full listing read needs: the listing `l`, its dealer `d`, the dealer's parent `p`. */
export const LISTING_COLUMNS = `l.id, l.slug, l.external_reference, l.status, l.created_at, l.updated_at, l.sold_at,
  ${LISTING_FIELDS.map(([, column]) => `l.${column}`).join(', ')},
  pa.name AS external_provider,
  d.id AS d_id, d.parent_id AS d_parent_id, d.location_code AS d_location_code, d.company_name AS d_company_name,
  d.full_name AS d_full_name, d.display_name AS d_display_name, d.email AS d_email, d.phone AS d_phone,
  d.address AS d_address, d.postal_code AS d_postal_code, d.city AS d_city, d.province AS d_province,
  d.logo_url AS d_logo_url, d.metadata AS d_metadata, d.updated_at AS d_updated_at,
  p.location_code AS d_p_location_code, p.company_name AS d_p_company_name, p.full_name AS d_p_full_name,
  p.display_name AS d_p_display_name`;

export const LISTING_JOINS = `JOIN partners pa ON pa.id = l.partner_id
  JOIN dealer_profiles d ON d.id = l.dealer_profile_id
  LEFT JOIN dealer_profiles p ON p.id = d.parent_id`;

export type Listing = ListingDto;

const NESTED_IN_LOCATION = new Set(['postalCode', 'city', 'province', 'latitude', 'longitude']);

export function rowToListing(row: Record<string, unknown>, listingBaseUrl: string): Listing {
  const images = (row.images as string[]).map((url, position) => ({ url, position }));
  const listing: Record<string, unknown> = {
    id: row.id as string,
    slug: row.slug as string,
    listingUrl: `${listingBaseUrl}/${row.slug as string}`,
    dealerProfileId: row.d_id as string,
    externalReference: row.external_reference as string,
    externalProvider: row.external_provider as string,
    status: row.status as string,
    location: {
      postalCode: row.postal_code as string | null,
      city: row.city as string | null,
      province: row.province as string | null,
      latitude: row.latitude as number | null,
      longitude: row.longitude as number | null,
    },
    images,
    mainImageUrl: images[0]?.url ?? null,
    features: row.features as { category: string; name: string }[],
    dealer: rowToDealer(row, 'd_'),
    createdAt: (row.created_at as Date).toISOString(),
    updatedAt: (row.updated_at as Date).toISOString(),
  };
  for (const [field, column] of LISTING_FIELDS) {
    if (NESTED_IN_LOCATION.has(field) || field === 'images' || field === 'features') continue;
    const value = row[column];
    // The spec shows historyReportUrl only "when provided"; every other field is always present.
    if (field === 'historyReportUrl' && value == null) continue;
    listing[field] = value ?? null;
  }
  if (row.sold_at) listing.soldAt = (row.sold_at as Date).toISOString();
  return listing as Listing;
}
