import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { AuditStore } from '../../store/audit.js';
import type { Db, Projection } from '../../store/db.js';
import type { DealerStore } from '../../store/dealers.js';
import type { ListingJson } from '../../store/listings/json.js';
import type { ListingReadStore } from '../../store/listings/reads.js';
import type { PartnerStore } from '../../store/partners.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import type { AttemptOutcome, EndpointRecord, WebhookStore } from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import { deliver } from './deliver.js';
import { BATCH_SIZE, deliveryWalk } from './next-delivery.js';
import { roundRecords } from './record.js';

/** A partner that is disabled or lost a scope: its endpoints are looked at again after this. */
const PAUSED_RECHECK_MS = 60_000;
/** One lease delivers at most this many batches in a row, then lets the others have a turn. */
const BATCHES_PER_LEASE = 20;
/**
 * A caught-up endpoint is not sent to again for this long: changes made meanwhile go together in
 * its next delivery. A change after a quiet spell still goes at the next poll; under steady writes
 * each endpoint gets about one delivery a second instead of one per poll, which is what keeps
 * delivery work (and so write throughput) flat as endpoints are added. A backlog (a full batch)
 * is sent back to back.
 */
const DELIVERY_SPACING_MS = 1000;
/** How long the delivery log keeps an attempt. */
const LOG_RETENTION_DAYS = 30;

export interface RoundDeps {
  db: Pick<Db, 'transaction'>;
  store: WebhookStore;
  listings: Pick<ListingReadStore, 'page'>;
  syncHorizon: Pick<SyncHorizonStore, 'current'>;
  partners: Pick<PartnerStore, 'get'>;
  dealers: Pick<DealerStore, 'subtree'>;
  audit: Pick<AuditStore, 'recordBy'>;
  cursors: CursorCodec;
  /** Listings as GET /listings/{id} sends them: the stored read model's JSON text. */
  listingJson: Projection<ListingJson>;
  post: PostWebhook;
  logger: Logger;
  /** Called after every attempt (metrics). */
  observe?: ((outcome: AttemptOutcome) => void) | undefined;
  /** Called when a round of an endpoint failed for a reason of the service's own (metrics). */
  roundFailed?: (() => void) | undefined;
  /**
   * True while partners' requests saturate this instance (http/pressure.ts): a round then ends
   * after one batch, and the loop (background/webhooks.ts) claims one endpoint a second. Writes
   * keep their speed however many endpoints there are; deliveries are late, never lost.
   */
  saturated?: (() => boolean) | undefined;
  /** How long a claimed endpoint stays this instance's without a word from it. */
  leaseMs: number;
}

/**
 * Delivery rounds. Instances share the work through leases on endpoint rows (claimed with SKIP
 * LOCKED); every step that moves an endpoint on is conditioned on still holding its lease, and a
 * lease that lapses (a killed instance) lets another instance pick the endpoint up. A round
 * delivers for one leased endpoint: what to send (next-delivery.ts), sending it (deliver.ts),
 * keeping what happened (record.ts). When to claim is the loop's (background/webhooks.ts).
 */
export function webhookRounds(deps: RoundDeps) {
  const owner = randomUUID();
  const { leaseMs } = deps;
  const walk = deliveryWalk(deps);
  const records = roundRecords({ ...deps, owner });

  /**
   * Delivers for one leased endpoint until it is caught up, fails, has had its turn, or
   * `stopping()` (the instance shuts down: the delivery under way finishes first). Never rejects.
   */
  async function serve(claimed: EndpointRecord, stopping: () => boolean): Promise<void> {
    let endpoint = claimed;
    let released = false;
    let failedRound = false;
    try {
      // The partner's scope as it is when the lease begins; a lease lasts seconds at most.
      const filter = await walk.filterOf(endpoint);
      if (!filter) {
        await deps.store.postpone(endpoint.id, owner, new Date(Date.now() + PAUSED_RECHECK_MS));
        return;
      }
      for (let batch = 0; batch < BATCHES_PER_LEASE && !stopping(); batch++) {
        if (batch > 0 && deps.saturated?.()) return; // released below; due again at the next poll
        const next = await walk.nextDelivery(endpoint, filter);
        if ('advanceTo' in next) {
          await deps.store.advance(endpoint.id, owner, next.advanceTo, DELIVERY_SPACING_MS);
          return;
        }
        const { deliveryId, through, listings, retry, scope, replaces } = next;
        if (listings.length === 0) {
          // Every listing of a retried stretch has changed since: later deliveries carry them.
          if (!(await deps.store.acknowledge(endpoint.id, owner, replaces ?? deliveryId, null))) return;
          // The streak goes on (acknowledge.ts): the attempts the stretch had, kept with it.
          const streakAttempts = endpoint.failingSince ? (endpoint.pending?.attempt ?? 0) : 0;
          endpoint = { ...endpoint, position: through, pending: null, streakAttempts };
          continue;
        }
        const from = endpoint.position;
        if (
          !(await deps.store.beginDelivery(endpoint.id, owner, leaseMs, {
            deliveryId,
            from,
            through,
            retry,
            scope,
            replaces,
          }))
        )
          return;
        const outcome = await deliver(deps, endpoint, next);
        if (!outcome.ok) {
          await records.failed(endpoint, outcome);
          return;
        }
        // A batch that is not full took everything settled: caught up, so the lease ends with
        // the acknowledgement (one statement) and the next look waits DELIVERY_SPACING_MS.
        const caughtUp = !retry && listings.length < BATCH_SIZE;
        const release = caughtUp ? { spacingMs: DELIVERY_SPACING_MS } : null;
        if (!(await records.succeeded(endpoint, outcome, release))) return;
        if (caughtUp) {
          released = true;
          return;
        }
        endpoint = { ...endpoint, position: through, pending: null, failingSince: null, streakAttempts: 0 };
      }
    } catch (error) {
      failedRound = true;
      await records.roundFailed(endpoint, error);
    } finally {
      if (!failedRound) records.roundOver(endpoint.id);
      if (!released) await deps.store.release(endpoint.id, owner).catch(() => {});
    }
  }

  return {
    owner,
    /** Leases up to `limit` endpoints that are due and have something to send. */
    claim: (limit: number) => deps.store.claim(owner, leaseMs, limit),
    serve: (endpoint: EndpointRecord, stopping: () => boolean) =>
      serve(endpoint, stopping).catch((error: unknown) =>
        deps.logger.warn({ err: error, webhookEndpoint: endpoint.id }, 'webhook delivery round failed'),
      ),
    /** Deletes what the delivery log holds past its retention (30 days). */
    prune: () => deps.store.prune(LOG_RETENTION_DAYS),
  };
}

export type WebhookRounds = ReturnType<typeof webhookRounds>;
