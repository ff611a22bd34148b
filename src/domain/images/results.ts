import type { Queryable } from '../../store/db.js';
import { type NewEvent, recordEvents } from '../../store/events.js';
import { rerenderListingsOfImage, rewriteListingsOfImage } from '../../store/image-checks.js';
import { recordReadinessChanges } from '../listings/writes/readiness-events.js';
import type { ImageCheck, ImageState } from './classify.js';

/** What a result changed, for whoever writes what follows from it in the same transaction. */
export interface CheckOutcome {
  url: string;
  check: ImageCheck;
  previousState: ImageState;
}

/**
 * What follows, in the result's own transaction, when a check changed what partners see of an
 * image (docs/images.md): every listing using it gets its stored text rewritten (each image's
 * check, the listing's readiness), and the events of the change are recorded in the outbox
 * (docs/webhooks.md): `listing.images_checked` for each such listing, `listing.readiness_changed`
 * for those whose readiness changed. Nothing here moves a listing's `updatedAt`.
 */
export async function imageCheckChanged(tx: Queryable, outcome: CheckOutcome): Promise<void> {
  const listings = await rewriteListingsOfImage(tx, outcome.url);
  const { check } = outcome;
  const events: NewEvent[] = [];
  for (const listing of listings) {
    events.push({
      type: 'listing.images_checked',
      listingId: listing.id,
      data: {
        images: [{ url: outcome.url, from: outcome.previousState, to: check.state, problem: check.problem }],
      },
    });
    if (listing.before !== listing.after && listing.before && listing.after)
      events.push({
        type: 'listing.readiness_changed',
        listingId: listing.id,
        data: { from: JSON.parse(listing.before), to: JSON.parse(listing.after) },
      });
  }
  await recordEvents(tx, events);
}

/**
 * The second look at an image's listings, in `tx` (checker.ts): the text of a listing a write
 * rendered from an older result is set right, and where that changes its readiness the change is
 * an event like any other, so the listing's next event starts where this one ends (docs/webhooks.md).
 */
export async function imageListingsSettled(tx: Queryable, url: string): Promise<void> {
  const listings = await rerenderListingsOfImage(tx, url);
  await recordReadinessChanges(
    tx,
    listings.map((l) => ({ listingId: l.id, from: l.before, to: l.after })),
  );
}
