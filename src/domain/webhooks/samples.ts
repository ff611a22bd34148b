import { randomUUID } from 'node:crypto';
import { type EventTypeName, eventSchema, eventType } from '../events/registry.js';
// The reference page's example listing: a sample is the documented shape, never a partner's data.
import { LISTING_ID, listing, REFERENCE } from '../listings/example.js';

const IMAGE = 'https://images.example.com/stock-2026-0042/2.jpg';

/** Each outbox type's own fields in a sample: a plausible change, as the checker would record it. */
const SAMPLE_FIELDS: Record<Exclude<EventTypeName, 'listings.changed'>, Record<string, unknown>> = {
  'listing.images_checked': {
    images: [
      {
        url: IMAGE,
        from: 'pending',
        to: 'unreachable',
        problem: { code: 'not_found', message: 'The server answered 404 Not Found.' },
      },
    ],
  },
  'listing.readiness_changed': {
    from: {
      live: false,
      reasons: [{ code: 'images_pending', message: 'No image has been checked yet.' }],
    },
    to: { live: true, reasons: [] },
  },
};

/**
 * The `data` of a test delivery of `type` (POST /webhooks/{id}/test?type=…): one item, as a real
 * delivery of that type carries it, with the reference page's example listing (its id and
 * reference are not the partner's, so a receiver applying it changes nothing of its own copy's
 * listings) and, for events, an id `evt_test_…` no real event has.
 */
export function sampleData(type: EventTypeName): string[] {
  if (type === 'listings.changed') return [JSON.stringify(listing)];
  const event = {
    id: `evt_test_${randomUUID()}`,
    occurredAt: new Date().toISOString(),
    listingId: LISTING_ID,
    externalReference: REFERENCE,
    ...SAMPLE_FIELDS[type],
  };
  // The sample must be what the registry promises; a registry change that breaks it fails here.
  eventSchema(eventType(type)!).parse(event);
  return [JSON.stringify(event)];
}
