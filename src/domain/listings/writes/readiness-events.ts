import type { Queryable } from '../../../store/db.js';
import { type NewEvent, recordEvents } from '../../../store/events.js';

/** An existing listing a write changed: its readiness (JSON text) as locked, and as written. */
export interface ReadinessChange {
  listingId: string;
  from: string | null | undefined;
  to: string | null | undefined;
}

/**
 * Records, in the write's transaction `tx`, a `listing.readiness_changed` event for each listing
 * whose readiness the write changed (docs/webhooks.md): `from` is what its lock read, the `to` of
 * the listing's previous event, so a subscriber's chain never breaks. One statement for the whole
 * batch (the write holds the rows' locks), none when no readiness changed. A new listing is not
 * here: its first readiness is not a change (listings.changed and the write's answer tell it).
 */
export async function recordReadinessChanges(
  tx: Queryable,
  changes: readonly ReadinessChange[],
): Promise<void> {
  const events: NewEvent[] = [];
  for (const { listingId, from, to } of changes) {
    if (!from || !to || from === to) continue;
    events.push({
      type: 'listing.readiness_changed',
      listingId,
      data: { from: JSON.parse(from), to: JSON.parse(to) },
    });
  }
  if (events.length) await recordEvents(tx, events, { locked: true });
}
