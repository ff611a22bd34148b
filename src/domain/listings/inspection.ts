import type {
  ImageSchedule,
  InspectedListingRow,
  ListingInspectionStore,
} from '../../store/listing-inspection.js';
import type { PartnerStore } from '../../store/partners.js';
import { notFound } from '../errors.js';
import { messages } from '../messages.js';

/** The listing's images as partners read them: what the schedule is matched to. */
interface ReadImages {
  images: { url: string; position: number }[];
}

/**
 * One listing as an operator sees it (docs/operations.md, "One listing"): exactly what its partner
 * reads (readiness with every reason, each image's check), and beside it what only the service
 * knows: whose it is, whether it is test data, and when each image is checked next.
 */
export interface ListingInspection<L extends ReadImages = ReadImages & Record<string, unknown>> {
  listing: L;
  partner: { id: string; name: string };
  mode: 'live' | 'test';
  /** Each image of the listing, in its order (its position), with its place in the checker's schedule. */
  images: ({ position: number } & ImageSchedule)[];
}

/** An image with no check row (none should be: a write adds it) is due now, never tried. */
const unscheduled = (url: string): ImageSchedule => ({
  url,
  nextCheckAt: new Date().toISOString(),
  lastCheckedAt: null,
  attempts: 0,
  failures: 0,
  checking: false,
});

function inspection(row: InspectedListingRow): ListingInspection {
  const listing = JSON.parse(row.json) as ListingInspection['listing'];
  const byUrl = new Map(row.schedule.map((s) => [s.url, s]));
  return {
    listing,
    partner: { id: row.partnerId, name: row.partnerName },
    mode: row.test ? 'test' : 'live',
    images: listing.images.map((i) => ({
      position: i.position,
      ...(byUrl.get(i.url) ?? unscheduled(i.url)),
    })),
  };
}

/** Operators' reads of one listing, of any partner, live or test. */
export function listingInspection(deps: {
  store: ListingInspectionStore;
  partners: Pick<PartnerStore, 'get'>;
}) {
  return {
    async byId(id: string): Promise<ListingInspection> {
      const row = await deps.store.byId(id);
      if (!row) throw notFound(messages.noListing(id));
      return inspection(row);
    },

    /** A partner's listing by its reference: its live one, or with `test` its test one. */
    async byReference(partnerId: string, reference: string, test: boolean): Promise<ListingInspection> {
      const row = await deps.store.byReference(partnerId, reference, test);
      if (row) return inspection(row);
      if (!(await deps.partners.get(partnerId))) throw notFound(messages.noPartner(partnerId));
      throw notFound(messages.noPartnerListing(partnerId, reference, test));
    },
  };
}

export type ListingInspections = ReturnType<typeof listingInspection>;
