import type { Logger } from 'pino';
import type { EventRounds } from '../domain/events/rounds.js';
import { type Loop, loop } from './loop.js';

/** How often an instance looks for endpoints with events to deliver. */
export const WEBHOOK_EVENTS_POLL_MS = 200;
const MAX_OUTAGE_POLL_MS = 5000;
/** While partners' requests saturate the instance: one walk this often. */
const SATURATED_TRICKLE_MS = 1000;
/** How often the outbox is pruned of events past their retention. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Delivers the events of the outbox (docs/webhooks.md, "Event types"), beside the walk of listings
 * (background/webhooks.ts) and in the same manner: a pass claims as many due walks as there are
 * free slots and starts a round for each (domain/events/rounds.ts); a round that ends frees a slot
 * and wakes the loop. Stopping lets the rounds in flight finish and release their leases.
 */
export function webhookEventsLoop(
  rounds: Pick<EventRounds, 'claim' | 'serve' | 'prune'>,
  options: { concurrency: number; saturated?: (() => boolean) | undefined; logger: Logger },
  /** For tests: a shorter interval. */
  tuning: { everyMs?: number } = {},
): Loop {
  const { concurrency, logger } = options;
  const saturated = () => options.saturated?.() ?? false;
  const active = new Map<string, Promise<void>>();
  let lastTrickle = 0;
  let lastPrune = 0;
  const delivering: Loop = loop({
    name: 'webhook-events',
    everyMs: WEBHOOK_EVENTS_POLL_MS,
    backoff: { maxMs: MAX_OUTAGE_POLL_MS },
    async pass(stopping) {
      if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
        lastPrune = Date.now();
        await rounds.prune();
      }
      const busy = saturated();
      if (busy && Date.now() - lastTrickle < SATURATED_TRICKLE_MS) return;
      const free = (busy ? 1 : concurrency) - active.size;
      if (free <= 0) return;
      if (busy) lastTrickle = Date.now();
      for (const stream of await rounds.claim(free)) {
        const round = rounds.serve(stream, stopping).finally(() => {
          active.delete(stream.endpointId);
          if (!saturated()) void delivering.wake();
        });
        active.set(stream.endpointId, round);
      }
    },
    failed(error, { inARow }) {
      if (inARow === 1) logger.warn({ err: error }, 'webhook event dispatcher could not claim endpoints');
    },
    recovered: () => logger.info('webhook event dispatcher claims endpoints again'),
    afterLast: async () => {
      await Promise.allSettled(active.values());
    },
    ...tuning,
  });
  return delivering;
}
