import { type Dealer, rowToDealer } from '../dealers.js';
import { LISTING_FIELDS, type ListingFieldName } from './columns.js';

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

/**
 * A listing as stored: every writable field under its name, with the row's own columns and its
 * dealer. How partners see it (listingUrl, the nested location, images with positions) is the
 * read shape's business: json.ts.
 */
export interface StoredListing {
  id: string;
  slug: string;
  externalReference: string;
  /** The name of the partner that wrote it. */
  externalProvider: string;
  status: string;
  values: Record<ListingFieldName, unknown>;
  dealer: Dealer;
  createdAt: Date;
  updatedAt: Date;
  soldAt: Date | null;
}

export function rowToStoredListing(row: Record<string, unknown>): StoredListing {
  const values = Object.fromEntries(LISTING_FIELDS.map(([field, column]) => [field, row[column] ?? null]));
  return {
    id: row.id as string,
    slug: row.slug as string,
    externalReference: row.external_reference as string,
    externalProvider: row.external_provider as string,
    status: row.status as string,
    values: values as Record<ListingFieldName, unknown>,
    dealer: rowToDealer(row, 'd_'),
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
    soldAt: (row.sold_at as Date | null) ?? null,
  };
}
