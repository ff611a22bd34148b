import { fieldProblem } from '../errors.js';
import { EVENT_TYPE_NAMES, type EventTypeName, OUTBOX_EVENT_TYPES } from './registry.js';

/**
 * An endpoint's subscription as saved: known types only (the route's schema refuses others with
 * the same words; this guards every other caller), each once, in the registry's order.
 */
export function checkSubscription(events: readonly string[]): EventTypeName[] {
  const unknown = events.find((name) => !(EVENT_TYPE_NAMES as readonly string[]).includes(name));
  if (unknown !== undefined || events.length === 0) {
    throw fieldProblem(
      'VALIDATION_FAILED',
      'events',
      `must name at least one of ${EVENT_TYPE_NAMES.join(', ')}${unknown === undefined ? '' : ` (got ${JSON.stringify(unknown)})`}`,
      'invalid_value',
    );
  }
  return EVENT_TYPE_NAMES.filter((name) => events.includes(name));
}

/** Whether a subscription takes the walk of listings, and whether it takes events of the outbox. */
export function walksOf(events: readonly string[]): { listings: boolean; outbox: boolean } {
  return {
    listings: events.includes('listings.changed'),
    outbox: events.some((name) => (OUTBOX_EVENT_TYPES as readonly string[]).includes(name)),
  };
}
