import { z } from 'zod';
import { IMAGE_STATES } from '../images/classify.js';

/*
 * Every type of event a webhook endpoint can subscribe to (docs/webhooks.md, "Event types"). The
 * one list: the OpenAPI `webhooks` section (api/openapi/webhook-deliveries.ts), the client's types
 * (generated from that document), the subscription check (api/external/v1/webhooks.ts) and the
 * delivery log's `type` all derive from it. Names are part of the contract: added to, never renamed.
 */

const problem = z
  .object({ code: z.string(), message: z.string() })
  .describe('Why it cannot be shown, as in the listing read shape.');

const imageState = z.enum(IMAGE_STATES);

/** One image whose check result changed. */
const imageChange = z.object({
  url: z.string().describe('The image URL, as the listing holds it.'),
  from: imageState.nullable().describe('Its state before (null: first seen).'),
  to: imageState.describe('Its state now.'),
  problem: problem.nullable().describe('Why it cannot be shown now; null when `to` is ok or pending.'),
});

const readiness = z.object({
  live: z.boolean(),
  reasons: z.array(problem).describe('Every reason it cannot be shown; empty when live.'),
});

/** What every event carries besides its own fields: which event, when, about which listing. */
export const eventEnvelope = z.object({
  id: z.string().describe('The event (evt_…): the same on every delivery of it; skip one you applied.'),
  occurredAt: z.string().describe('When the change that caused it was committed (ISO 8601, UTC).'),
  listingId: z.string(),
  externalReference: z.string().describe('Your reference of the listing.'),
});

export interface EventType {
  name: string;
  summary: string;
  description: string;
  /**
   * True for `listings.changed` only: its deliveries are pages of the endpoint's sync-cursor walk
   * (listing snapshots), not events of the outbox.
   */
  cursorWalk: boolean;
  /** The event's own fields, beside the envelope; null for the cursor walk (its data are listings). */
  payload: z.ZodObject | null;
}

export const EVENT_TYPES = [
  {
    name: 'listings.changed',
    summary: 'Listings changed',
    description:
      'The listings in your scope (and the endpoint’s filter) that changed since the previous delivery, 1 to 100 at a time, in order; the next waits for your 2xx. The default subscription.',
    cursorWalk: true,
    payload: null,
  },
  {
    name: 'listing.images_checked',
    summary: 'A listing’s image checks changed',
    description:
      'The check of one or more of a listing’s images reached a different state (docs/images.md): which images, from what state to what. A re-check that finds the same result sends nothing.',
    cursorWalk: false,
    payload: z.object({ images: z.array(imageChange).min(1) }),
  },
  {
    name: 'listing.readiness_changed',
    summary: 'A listing’s readiness changed: live or not, or its reasons',
    description:
      'A listing’s readiness changed (docs/images.md, "Readiness"): whether it can be shown, or the reasons it cannot, before and now. Sent for check results and for the partner’s own writes alike; each event’s `from` is the previous one’s `to`. A new listing’s first readiness is no event.',
    cursorWalk: false,
    payload: z.object({ from: readiness, to: readiness }),
  },
] as const satisfies readonly EventType[];

export type EventTypeName = (typeof EVENT_TYPES)[number]['name'];
export const EVENT_TYPE_NAMES = EVENT_TYPES.map((t) => t.name) as [EventTypeName, ...EventTypeName[]];
/** The types delivered from the outbox (every one but the cursor walk). */
export const OUTBOX_EVENT_TYPES = EVENT_TYPES.filter((t) => !t.cursorWalk).map((t) => t.name);
/** What an endpoint subscribes to when it names nothing: deliveries exactly as before event types. */
export const DEFAULT_EVENTS: EventTypeName[] = ['listings.changed'];

export function eventType(name: string): EventType | undefined {
  return EVENT_TYPES.find((t) => t.name === name);
}

/** One event of a type as a receiver gets it: the envelope and the type's own fields. */
export function eventSchema(type: EventType) {
  return eventEnvelope.extend(type.payload?.shape ?? {});
}

/** The payload type of each outbox event, for whoever records them (store/events.ts takes them). */
export type EventPayload<N extends EventTypeName> = z.input<
  NonNullable<Extract<(typeof EVENT_TYPES)[number], { name: N }>['payload']>
>;
