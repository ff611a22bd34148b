import type { z } from 'zod';
import type { Projection } from '../../../../store/db.js';
import { type ListingJson, listingJsonProjection as projection } from '../../../../store/listings/json.js';
import type { StoredListing } from '../../../../store/listings/rows.js';
import { listingSchema } from '../../../schemas/resources.js';

type ListingView = z.output<typeof listingSchema>;

/** Fields the read shape nests under `location` rather than showing flat. */
const NESTED_IN_LOCATION = new Set(['postalCode', 'city', 'province', 'latitude', 'longitude']);

/**
 * A stored listing as partners read it (docs/contract.md#one-listing): its public URL, the location
 * fields nested, images with their positions and the main image, timestamps as ISO strings.
 */
type ListingViewer = (stored: StoredListing) => ListingView;

export function listingView(listingBaseUrl: string): ListingViewer {
  return (stored: StoredListing): ListingView => {
    const { values } = stored;
    const images = ((values.images as string[] | null) ?? []).map((url, position) => ({ url, position }));
    const flat: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(values)) {
      if (NESTED_IN_LOCATION.has(field) || field === 'images' || field === 'features') continue;
      // historyReportUrl appears only when set (docs/contract.md#one-listing); every other field is
      // always present.
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

/** Reads listings as their finished JSON, keys in the response schema's order (store/listings/json.ts). */
export function listingJsonProjection(listingBaseUrl: string): Projection<ListingJson> {
  return projection(listingBaseUrl, Object.keys(listingSchema.shape));
}

export type { ListingJson };
