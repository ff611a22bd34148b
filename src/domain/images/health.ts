import type { ImageHealthGroup, ImageHealthStore } from '../../store/image-health.js';
import { IMAGE_STATES, type ImageState } from './classify.js';
import type { ImageFormat } from './formats.js';

/** An active listing that cannot go live, as partners read its readiness and images' checks. */
export interface NotLiveListing {
  id: string;
  externalReference: string;
  title: string;
  readiness: { live: boolean; reasons: { code: string; message: string }[] };
  images: {
    url: string;
    position: number;
    check: {
      state: ImageState;
      checkedAt: string | null;
      format: ImageFormat | null;
      width: number | null;
      height: number | null;
      bytes: number | null;
      contentType: string | null;
      problem: { code: string; message: string } | null;
    };
  }[];
}

/** A problem as the operator reads it: `not_found` ×12 in 9 listings. */
export interface ImageProblemCount {
  state: ImageState;
  code: string;
  images: number;
  listings: number;
}

/** One partner's image health (docs/operations.md, "Image health"). */
export interface ImageHealth {
  images: {
    /** Distinct image URLs in its listings. */
    total: number;
    /** In a state that cannot be shown: any but ok and pending. */
    broken: number;
    byState: Record<ImageState, number>;
  };
  /** Every problem of its broken images, the commonest first. */
  problems: ImageProblemCount[];
  listings: {
    total: number;
    active: number;
    /** Active listings that cannot go live. */
    notLive: number;
    /** Of those, how many give each readiness reason (a listing may give several). */
    reasons: { code: string; listings: number }[];
  };
  /** The first of them by reference, each with its reasons and every image's check. */
  notLive: NotLiveListing[];
}

/** Listings not live shown at most, unless asked for fewer. */
export const NOT_LIVE_SHOWN = 50;

const BROKEN = new Set<ImageState>(['not_an_image', 'too_small', 'too_large', 'unreachable']);

/** The problems of broken images, the most images first (then the most listings, then by code). */
export function commonestProblems(groups: readonly ImageHealthGroup[]): ImageProblemCount[] {
  return groups
    .filter((g) => BROKEN.has(g.state as ImageState))
    .map((g) => ({
      state: g.state as ImageState,
      code: g.problemCode ?? g.state,
      images: g.images,
      listings: g.listings,
    }))
    .sort((a, b) => b.images - a.images || b.listings - a.listings || a.code.localeCompare(b.code));
}

export function imageHealth(deps: { store: ImageHealthStore }) {
  return {
    async of(partnerId: string, limit = NOT_LIVE_SHOWN): Promise<ImageHealth> {
      const [groups, listings, notLive] = await Promise.all([
        deps.store.groups(partnerId),
        deps.store.listingCounts(partnerId),
        deps.store.notLive(partnerId, limit),
      ]);
      const byState = Object.fromEntries(IMAGE_STATES.map((s) => [s, 0])) as Record<ImageState, number>;
      // A URL is in one state: its groups (one per problem) add up.
      for (const g of groups) byState[g.state as ImageState] += g.images;
      const total = IMAGE_STATES.reduce((n, s) => n + byState[s], 0);
      const broken = [...BROKEN].reduce((n, s) => n + byState[s], 0);
      // The stored text holds only the states and formats the read shape writes (store/listings/json.ts).
      return {
        images: { total, broken, byState },
        problems: commonestProblems(groups),
        listings,
        notLive: notLive as NotLiveListing[],
      };
    },
  };
}

export type ImageHealthReads = ReturnType<typeof imageHealth>;
