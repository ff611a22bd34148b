import type { Logger } from 'pino';
import type { WebhookRounds } from '../domain/webhooks/round.js';
import { type Loop, type LoopTuning, loop } from './loop.js';

/** How often an instance looks for endpoints with changes to deliver. */
export const WEBHOOK_POLL_MS = 200;
/** While claiming fails (a database outage): polls spaced out, doubling up to this. */
const MAX_OUTAGE_POLL_MS = 5000;
/** While partners' requests saturate the instance: one batch of one endpoint this often. */
const SATURATED_TRICKLE_MS = 1000;
/** How often the delivery log is pruned of attempts past their retention. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Delivers webhooks (docs/webhooks.md): a pass claims as many due endpoints as there are free
 * slots (WEBHOOK_CONCURRENCY) and starts a round for each (domain/webhooks/round.ts), which runs
 * beside the passes; a round that ends frees a slot and wakes the loop. While partners' requests
 * saturate the instance (`saturated`, http/pressure.ts), one endpoint a second, and rounds do not
 * wake the loop. Stopping lets the rounds in flight finish (each delivery within
 * WEBHOOK_TIMEOUT_MS) and release their leases.
 */
export function webhooksLoop(
  rounds: Pick<WebhookRounds, 'claim' | 'serve'>,
  options: {
    /** Deliveries this instance runs at once. */
    concurrency: number;
    saturated?: (() => boolean) | undefined;
    logger: Logger;
  },
  tuning: LoopTuning = {},
): Loop {
  const { concurrency, logger } = options;
  const saturated = () => options.saturated?.() ?? false;
  const active = new Map<string, Promise<void>>();
  let lastTrickle = 0;
  const delivering: Loop = loop({
    name: 'webhooks',
    everyMs: WEBHOOK_POLL_MS,
    backoff: { maxMs: MAX_OUTAGE_POLL_MS },
    async pass(stopping) {
      const busy = saturated();
      if (busy && Date.now() - lastTrickle < SATURATED_TRICKLE_MS) return;
      const free = (busy ? 1 : concurrency) - active.size;
      if (free <= 0) return;
      if (busy) lastTrickle = Date.now();
      for (const endpoint of await rounds.claim(free)) {
        const round = rounds.serve(endpoint, stopping).finally(() => {
          active.delete(endpoint.id);
          // A finished round frees a slot: look for more work now rather than at the next poll
          // (unless partners' requests need the instance: then at the next poll).
          if (!saturated()) void delivering.wake();
        });
        active.set(endpoint.id, round);
      }
    },
    // A database outage: said once, then retried quietly, less often each time, until it is back.
    failed(error, { inARow }) {
      if (inARow === 1) logger.warn({ err: error }, 'webhook dispatcher could not claim endpoints');
    },
    recovered: () => logger.info('webhook dispatcher claims endpoints again'),
    afterLast: async () => {
      await Promise.allSettled(active.values());
    },
    ...tuning,
  });
  return delivering;
}

/** Keeps the delivery log to its retention: at start, then every hour (where webhooks are delivered). */
export function webhookLogLoop(
  rounds: Pick<WebhookRounds, 'prune'>,
  logger: Logger,
  tuning: LoopTuning = {},
): Loop {
  return loop({
    name: 'webhook-log',
    everyMs: PRUNE_EVERY_MS,
    backoff: { firstMs: 60_000, maxMs: PRUNE_EVERY_MS },
    pass: () => rounds.prune(),
    failed(error, { inARow }) {
      if (inARow === 1) logger.warn({ err: error }, 'could not prune the webhook delivery log');
    },
    ...tuning,
  });
}
