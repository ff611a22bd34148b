import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { AuditStore } from '../../store/audit.js';
import type { Db, Projection, Queryable } from '../../store/db.js';
import type { DealerStore } from '../../store/dealers.js';
import type { ListingJson } from '../../store/listings/json.js';
import type { ListingFilter, ListingReadStore, PageRow, Position } from '../../store/listings/reads.js';
import type { PartnerStore } from '../../store/partners.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import {
  type AttemptOutcome,
  type EndpointRecord,
  NIL_UUID,
  type WebhookStore,
} from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import { keptAnswer } from './answer.js';
import { deliveryBody } from './payload.js';
import { afterFailure } from './retry.js';
import { afterRoundFailure, type RoundFailures } from './round-failures.js';
import { signingSecrets, webhookHeaders } from './signing.js';

/** At most this many listings per delivery (the contract's limit). */
const BATCH_SIZE = 100;
/** A partner that is disabled or lost a scope: its endpoints are looked at again after this. */
const PAUSED_RECHECK_MS = 60_000;
/** One lease delivers at most this many batches in a row, then lets the others have a turn. */
const BATCHES_PER_LEASE = 20;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/**
 * A caught-up endpoint is not sent to again for this long: changes made meanwhile go together in
 * its next delivery. A change after a quiet spell still goes at the next poll; under steady writes
 * each endpoint gets about one delivery a second instead of one per poll, which is what keeps
 * delivery work (and so write throughput) flat as endpoints are added. A backlog (a full batch)
 * is sent back to back.
 */
const DELIVERY_SPACING_MS = 1000;
/** While partners' requests saturate the instance: one batch of one endpoint this often. */
const SATURATED_TRICKLE_MS = 1000;
/** The longest wait between two polls while the database does not answer. */
const MAX_OUTAGE_POLL_MS = 5000;
/** How long the delivery log keeps an attempt. */
const LOG_RETENTION_DAYS = 30;
/** A listing of a delivery: its JSON text as stored (the read model), and its place in the walk. */
type Row = PageRow<ListingJson>;

interface DispatcherDeps {
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
  observe?: (outcome: AttemptOutcome) => void;
  /** Called when a round of an endpoint failed for a reason of the service's own (metrics). */
  roundFailed?: () => void;
  /**
   * True while partners' requests saturate this instance: deliveries then make way (one batch of
   * one endpoint a second) and catch up when the load drops. Writes thus keep their speed however many
   * endpoints there are; deliveries are late under saturation, never lost.
   */
  saturated?: () => boolean;
  options: {
    /** Deliveries this instance runs at once; 0: it delivers none. */
    concurrency: number;
    /** How often due endpoints are looked for. */
    pollMs: number;
    /** How long a claimed endpoint stays this instance's without a word from it. */
    leaseMs: number;
  };
}

/**
 * Delivers webhooks. An endpoint is a sync cursor the service keeps: each delivery is the next
 * page of the settled (updatedAt, id) walk after its position, inside the partner's scope and the
 * endpoint's filter, and the position moves only when the receiver answers 2xx. So nothing is
 * missed or reordered, and nothing is written per listing change (docs/webhooks.md).
 *
 * Instances share the work through leases on endpoint rows (claimed with SKIP LOCKED); every
 * step that moves an endpoint on is conditioned on still holding its lease, and a lease that
 * lapses (a killed instance) lets another instance pick the endpoint up.
 */
export function webhookDispatcher(deps: DispatcherDeps) {
  const owner = randomUUID();
  const { concurrency, pollMs, leaseMs } = deps.options;
  const active = new Map<string, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let stopped = false;
  let lastPrune = 0;
  let lastTrickle = 0;
  let failing = false;
  /**
   * Endpoint id → its rounds in a row that failed (the wait), of them the database's refusals of
   * the round's data in a row (setting aside), and the cause last logged for it.
   */
  const roundFailures = new Map<string, RoundFailures>();

  /** The listings an endpoint may carry now: the partner's scope as it is, narrowed by the filter. */
  async function filterOf(endpoint: EndpointRecord): Promise<ListingFilter | null> {
    const partner = await deps.partners.get(endpoint.partnerId);
    if (!partner || partner.disabled) return null;
    if (!partner.scopes.includes('read:listings') || !partner.scopes.includes('manage:webhooks')) return null;
    let profileIds: string[] | null =
      partner.accessScope === 'global' ? null : await deps.dealers.subtree(partner.rootProfileIds);
    if (endpoint.filterProfileIds) {
      const wanted = await deps.dealers.subtree(endpoint.filterProfileIds);
      const allowed = profileIds === null ? null : new Set(profileIds);
      profileIds = wanted.filter((id) => allowed === null || allowed.has(id));
    }
    return {
      profileIds,
      status: endpoint.filterStatuses,
      updatedSince: null,
      partnerId: null,
      reference: null,
    };
  }

  /** The next delivery to send, or why there is none. */
  async function nextDelivery(
    endpoint: EndpointRecord,
    filter: ListingFilter,
  ): Promise<
    | { deliveryId: string; through: Position; attempt: number; listings: Row[]; retry: boolean }
    | { advanceTo: Position | null }
  > {
    const after = endpoint.position;
    if (endpoint.pending) {
      // A retry carries the same stretch of the walk, each listing in its state now. One that
      // changed since has moved past the stretch: the deliveries after this one carry it.
      const { through } = endpoint.pending;
      const rows = await deps.listings.page(filter, 'updatedAt', BATCH_SIZE, 0, {
        after,
        through,
        horizon: null,
        projection: deps.listingJson,
      });
      return {
        deliveryId: endpoint.pending.deliveryId,
        through,
        attempt: endpoint.pending.attempt + 1,
        listings: rows,
        retry: true,
      };
    }
    // The horizon first, in a statement of its own (store/sync-horizon.ts says why).
    const horizon = await deps.syncHorizon.current();
    const rows = await deps.listings.page(filter, 'updatedAt', BATCH_SIZE, 0, {
      after,
      horizon,
      projection: deps.listingJson,
    });
    const firstUnsettled = rows.findIndex((r) => !r.settled);
    const settled = firstUnsettled === -1 ? rows : rows.slice(0, firstUnsettled);
    if (settled.length === 0) {
      // Nothing of the filter lies between the position and the horizon: the position may pass
      // up to it, so the next look starts there rather than at a position far behind.
      const passable = horizon !== '-infinity' && horizon > after.ts;
      return { advanceTo: passable ? { ts: horizon, id: NIL_UUID } : null };
    }
    return {
      deliveryId: randomUUID(),
      through: settled[settled.length - 1]!.position,
      attempt: 1,
      listings: settled,
      retry: false,
    };
  }

  /** Delivers for one leased endpoint until it is caught up, fails, or has had its turn. */
  async function serve(claimed: EndpointRecord): Promise<void> {
    let endpoint = claimed;
    let released = false;
    let failedRound = false;
    try {
      // The partner's scope as it is when the lease begins; a lease lasts seconds at most.
      const filter = await filterOf(endpoint);
      if (!filter) {
        await deps.store.postpone(endpoint.id, owner, new Date(Date.now() + PAUSED_RECHECK_MS));
        return;
      }
      for (let batch = 0; batch < BATCHES_PER_LEASE && !stopped; batch++) {
        if (batch > 0 && deps.saturated?.()) return; // released below; due again at the next poll
        const next = await nextDelivery(endpoint, filter);
        if ('advanceTo' in next) {
          if (next.advanceTo) await deps.store.advance(endpoint.id, owner, next.advanceTo);
          return;
        }
        const { deliveryId, through, attempt, listings, retry } = next;
        if (listings.length === 0) {
          // Every listing of a retried stretch has changed since: later deliveries carry them.
          if (!(await deps.store.acknowledge(endpoint.id, owner, deliveryId, null))) return;
          endpoint = { ...endpoint, position: through, pending: null };
          continue;
        }
        const began = await deps.store.beginDelivery(endpoint.id, owner, leaseMs, {
          deliveryId,
          from: endpoint.position,
          through,
          retry,
        });
        if (!began) return;
        const data = listings.map((row) => row.listing.json);
        const body = deliveryBody(deps.cursors, endpoint.id, 'listings.changed', data, through);
        const headers = webhookHeaders(signingSecrets(endpoint), `msg_${deliveryId}`, body);
        const result = keptAnswer(await deps.post(endpoint.url, headers, body));
        const ok =
          result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
        const outcome: AttemptOutcome = {
          deliveryId,
          type: 'listings.changed',
          attempt,
          ok,
          listingCount: listings.length,
          responseCode: result.status,
          responseBody: result.body,
          error: ok ? null : (result.error ?? `the endpoint answered ${result.status}, not 2xx`),
          durationMs: result.durationMs,
          nextAttemptAt: null,
        };
        if (ok) {
          deps.observe?.(outcome);
          // A batch that is not full took everything settled: caught up, so the lease ends with
          // the acknowledgement (one statement) and the next look waits DELIVERY_SPACING_MS.
          const caughtUp = !retry && listings.length < BATCH_SIZE;
          const release = caughtUp ? { spacingMs: DELIVERY_SPACING_MS } : null;
          if (!(await deps.store.acknowledge(endpoint.id, owner, deliveryId, outcome, release))) return;
          if (caughtUp) {
            released = true;
            return;
          }
          endpoint = { ...endpoint, position: through, pending: null, failingSince: null };
          continue;
        }
        const now = new Date();
        const failingSince = endpoint.failingSince ? new Date(endpoint.failingSince) : now;
        const decision = afterFailure(attempt, result.status, failingSince, now);
        const failed: AttemptOutcome = {
          ...outcome,
          nextAttemptAt: 'retryAt' in decision ? decision.retryAt : null,
        };
        deps.observe?.(failed);
        const disable = 'disable' in decision ? decision.disable : null;
        // The endpoint is never seen disabled without its audit entry: one transaction.
        const recorded = await deps.db.transaction(async (tx) => {
          const moved = await deps.store.fail(endpoint.id, owner, failed, disable, tx);
          if (moved && disable) await recordDisable(endpoint, disable, tx);
          return moved;
        });
        if (recorded && disable) logDisable(endpoint, disable);
        return;
      }
    } catch (error) {
      failedRound = true;
      await roundFailed(endpoint, error);
    } finally {
      if (!failedRound) roundFailures.delete(endpoint.id);
      if (!released) await deps.store.release(endpoint.id, owner).catch(() => {});
    }
  }

  /**
   * A round the service could not finish (the database refused to record an attempt, say): the
   * endpoint waits, or is set aside (round-failures.ts says which).
   */
  async function roundFailed(endpoint: EndpointRecord, error: unknown): Promise<void> {
    deps.roundFailed?.();
    const next = afterRoundFailure(roundFailures.get(endpoint.id), error);
    roundFailures.set(endpoint.id, next.state);
    if (next.log) {
      deps.logger.warn(
        { err: error, webhookEndpoint: endpoint.id, retryInMs: next.waitMs },
        'webhook delivery round failed',
      );
    }
    try {
      if (next.setAside) {
        const reason = next.setAside;
        await deps.db.transaction(async (tx) => {
          await deps.store.disable(endpoint.id, reason, false, tx);
          await recordDisable(endpoint, reason, tx);
        });
        logDisable(endpoint, reason);
        roundFailures.delete(endpoint.id);
        return;
      }
      await deps.store.postpone(endpoint.id, owner, new Date(Date.now() + next.waitMs));
    } catch {
      // The database is gone too: the lease lapses and the endpoint is looked at again then.
    }
  }

  function logDisable(endpoint: EndpointRecord, reason: string): void {
    deps.logger.warn(
      { webhookEndpoint: endpoint.id, partnerId: endpoint.partnerId, reason },
      'webhook endpoint disabled',
    );
  }

  async function recordDisable(endpoint: EndpointRecord, reason: string, tx: Queryable): Promise<void> {
    await deps.audit.recordBy(
      'service',
      {
        action: 'webhook.disabled',
        partnerId: endpoint.partnerId,
        details: { endpointId: endpoint.id, url: endpoint.url, reason },
      },
      { requestId: 'webhook-dispatcher' },
      tx,
    );
  }

  async function tick(): Promise<void> {
    const saturated = deps.saturated?.() ?? false;
    if (saturated && Date.now() - lastTrickle < SATURATED_TRICKLE_MS) return;
    const free = (saturated ? 1 : concurrency) - active.size;
    if (free <= 0) return;
    if (saturated) lastTrickle = Date.now();
    const claimed = await deps.store.claim(owner, leaseMs, free);
    for (const endpoint of claimed) {
      const run = serve(endpoint)
        .catch((error: unknown) =>
          deps.logger.warn({ err: error, webhookEndpoint: endpoint.id }, 'webhook delivery round failed'),
        )
        .finally(() => {
          active.delete(endpoint.id);
          // A finished round frees a slot: look for more work now rather than at the next tick
          // (unless partners' requests need the instance: then at the next poll).
          if (!stopped && !deps.saturated?.()) schedule(0);
        });
      active.set(endpoint.id, run);
    }
    if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      await deps.store.prune(LOG_RETENTION_DAYS);
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, delayMs);
    timer.unref();
  }

  /** While claiming fails (a database outage), the polls are spaced out: doubling up to 5 s. */
  let outageDelayMs = 0;
  function run(): void {
    if (ticking) return;
    ticking = tick()
      .then(() => {
        if (failing) deps.logger.info('webhook dispatcher claims endpoints again');
        failing = false;
        outageDelayMs = 0;
      })
      .catch((error: unknown) => {
        // A database outage: said once, then retried quietly, less often each time, until it is back.
        if (!failing) deps.logger.warn({ err: error }, 'webhook dispatcher could not claim endpoints');
        failing = true;
        outageDelayMs = Math.min(MAX_OUTAGE_POLL_MS, Math.max(pollMs, outageDelayMs * 2));
      })
      .finally(() => {
        ticking = undefined;
        schedule(failing ? outageDelayMs : pollMs);
      });
  }

  return {
    owner,
    start(): void {
      if (concurrency > 0) schedule(0);
    },
    /** Stops claiming and waits for the deliveries in flight (each bounded by the timeout). */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await ticking;
      await Promise.allSettled(active.values());
    },
  };
}
