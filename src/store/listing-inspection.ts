import type { Projection, Queryable } from './db.js';
import { isoTime, type ListingJson } from './listings/json.js';

/** Where an image's check stands in the checker's schedule (migration 018, image_checks). */
export interface ImageSchedule {
  url: string;
  /** When it is due; while a check holds it, the end of that check's lease. */
  nextCheckAt: string;
  /** When a check last ran (checkedAt says when its result was first found); null: never. */
  lastCheckedAt: string | null;
  /** Checks run on it, ever. */
  attempts: number;
  /** Checks in a row that did not find the image ok (domain/images/schedule.ts backs off on them). */
  failures: number;
  /** A checker holds it now (its lease has not ended). */
  checking: boolean;
}

/** One listing as an operator inspects it: the partner's read shape and what only the service knows. */
export interface InspectedListingRow {
  /** The listing as partners read it (store/listings/json.ts), as JSON text. */
  json: string;
  partnerId: string;
  partnerName: string;
  test: boolean;
  /** Each distinct URL of its images, by URL. */
  schedule: ImageSchedule[];
}

/**
 * Reads one listing for an operator, of any partner, live or test (docs/operations.md, "One
 * listing"): by id (the primary key) or by its partner's reference (the key (partner_id, test,
 * external_reference)). One statement: the read model's text, the owner and each image's schedule
 * (listing_images' key, then image_checks'), from one snapshot.
 */
export function listingInspectionStore(db: Queryable, listingJson: Projection<ListingJson>) {
  const select = (
    where: string,
  ) => `SELECT ${listingJson.columns}, l.partner_id, pa.name AS partner_name, l.test,
      (SELECT coalesce(json_agg(json_build_object('url', c.url,
          'nextCheckAt', ${isoTime('c.next_check_at')},
          'lastCheckedAt', ${isoTime('c.last_checked_at')},
          'attempts', c.attempts, 'failures', c.failures,
          'checking', coalesce(c.lease_until > now(), false)) ORDER BY c.url), '[]')::text
        FROM listing_images li JOIN image_checks c ON c.url = li.url
        WHERE li.listing_id = l.id) AS schedule
    FROM listings l ${listingJson.joins ?? ''}
    WHERE ${where}`;
  const read = (row: Record<string, unknown> | undefined): InspectedListingRow | undefined =>
    row && {
      json: listingJson.read(row).json,
      partnerId: row.partner_id as string,
      partnerName: row.partner_name as string,
      test: row.test as boolean,
      schedule: JSON.parse(row.schedule as string) as ImageSchedule[],
    };
  return {
    async byId(id: string): Promise<InspectedListingRow | undefined> {
      const [row] = await db.query('inspect listing by id', select('l.id = $1'), [id]);
      return read(row);
    },

    async byReference(
      partnerId: string,
      reference: string,
      test: boolean,
    ): Promise<InspectedListingRow | undefined> {
      const [row] = await db.query(
        'inspect listing by reference',
        select('l.partner_id = $1 AND l.test = $2 AND l.external_reference = $3'),
        [partnerId, test, reference],
      );
      return read(row);
    },
  };
}

export type ListingInspectionStore = ReturnType<typeof listingInspectionStore>;
