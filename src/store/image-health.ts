import type { Queryable } from './db.js';

/** The images of one partner's listings in one state with one problem (the problem null when none). */
export interface ImageHealthGroup {
  /** A check state (domain/images/classify.ts, IMAGE_STATES). */
  state: string;
  problemCode: string | null;
  /** Distinct image URLs: one check each, however many listings use it. */
  images: number;
  /** The partner's listings having at least one of them. */
  listings: number;
}

export interface ListingCounts {
  total: number;
  active: number;
  /** Active listings that cannot go live (docs/images.md, "Readiness"). */
  notLive: number;
}

/** An active listing that cannot go live, as partners read it: its readiness and its images' checks. */
export interface NotLiveListing {
  id: string;
  externalReference: string;
  title: string;
  readiness: { live: boolean; reasons: { code: string; message: string }[] };
  images: { url: string; position: number; check: ImageCheckJson }[];
}

/** An image's check as the read shape writes it (store/listings/json.ts). */
export interface ImageCheckJson {
  state: string;
  checkedAt: string | null;
  format: string | null;
  width: number | null;
  height: number | null;
  bytes: number | null;
  contentType: string | null;
  problem: { code: string; message: string } | null;
}

/**
 * Live, as the read shape's readiness says (store/listings/json.ts, readinessSql): active, priced,
 * and an image checked ok. An index probe per image of the listing.
 */
const NOT_LIVE = `(l.status = 'active' AND (l.price IS NULL OR NOT EXISTS (
  SELECT 1 FROM listing_images li JOIN image_checks c ON c.url = li.url
  WHERE li.listing_id = l.id AND c.state = 'ok')))`;

/**
 * The stored text of a listing's body (`,"title":…,"readiness":{…}`) as one JSON object: what a
 * partner reads of its images and readiness, to the byte (the checker rewrites it with each result).
 */
const BODY_JSON = `('{' || substr(l.read_json, 2) || '}')::jsonb`;

/**
 * An operator's view of one partner's live images (docs/operations.md, "Image health"; test
 * listings are the partner's own business, docs/test-mode.md). Each read is one set-based
 * statement: the partner's listings through the key (partner_id, test, external_reference), which
 * also gives the listings in reference order, then each listing's images by listing_images' key and
 * each check by image_checks' key.
 */
export function imageHealthStore(db: Queryable) {
  return {
    /** The partner's images grouped by state and problem. */
    async groups(partnerId: string): Promise<ImageHealthGroup[]> {
      const rows = await db.query<{
        state: string;
        problem_code: string | null;
        images: number;
        listings: number;
      }>(
        'image health groups',
        `SELECT c.state, c.problem_code, count(DISTINCT c.url)::int AS images,
            count(DISTINCT li.listing_id)::int AS listings
          FROM listings l
          JOIN listing_images li ON li.listing_id = l.id
          JOIN image_checks c ON c.url = li.url
          WHERE l.partner_id = $1 AND NOT l.test
          GROUP BY c.state, c.problem_code`,
        [partnerId],
      );
      return rows.map((r) => ({
        state: r.state,
        problemCode: r.problem_code,
        images: Number(r.images),
        listings: Number(r.listings),
      }));
    },

    /** How many listings the partner has, active, and active but not live; and the reasons' counts. */
    async listingCounts(
      partnerId: string,
    ): Promise<ListingCounts & { reasons: { code: string; listings: number }[] }> {
      const [counts] = await db.query<{ listings: number; active: number; not_live: number }>(
        'image health listing counts',
        `SELECT count(*)::int AS listings, count(*) FILTER (WHERE l.status = 'active')::int AS active,
            count(*) FILTER (WHERE ${NOT_LIVE})::int AS not_live
          FROM listings l WHERE l.partner_id = $1 AND NOT l.test`,
        [partnerId],
      );
      const reasons = await db.query<{ code: string; listings: number }>(
        'image health reasons',
        `SELECT r.code, count(*)::int AS listings
          FROM listings l, jsonb_to_recordset(${BODY_JSON} -> 'readiness' -> 'reasons') AS r(code text)
          WHERE l.partner_id = $1 AND NOT l.test AND ${NOT_LIVE}
          GROUP BY r.code ORDER BY count(*) DESC, r.code`,
        [partnerId],
      );
      return {
        total: Number(counts?.listings ?? 0),
        active: Number(counts?.active ?? 0),
        notLive: Number(counts?.not_live ?? 0),
        reasons: reasons.map((r) => ({ code: r.code, listings: Number(r.listings) })),
      };
    },

    /** The first `limit` active listings that cannot go live, by reference. */
    async notLive(partnerId: string, limit: number): Promise<NotLiveListing[]> {
      const rows = await db.query<{ id: string; external_reference: string; body: string }>(
        'image health listings not live',
        // The page first, then only its rows' texts parsed.
        `SELECT l.id, l.external_reference,
            jsonb_build_object('title', b.j -> 'title', 'readiness', b.j -> 'readiness', 'images', b.j -> 'images')::text AS body
          FROM (SELECT l.id, l.external_reference, l.read_json FROM listings l
            WHERE l.partner_id = $1 AND NOT l.test AND ${NOT_LIVE}
            ORDER BY l.external_reference LIMIT $2) l,
            LATERAL (SELECT ${BODY_JSON} AS j) b
          ORDER BY l.external_reference`,
        [partnerId, limit],
      );
      return rows.map((r) => {
        const body = JSON.parse(r.body) as Omit<NotLiveListing, 'id' | 'externalReference'>;
        return { id: r.id, externalReference: r.external_reference, ...body };
      });
    },
  };
}

export type ImageHealthStore = ReturnType<typeof imageHealthStore>;
