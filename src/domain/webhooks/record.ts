import type { Logger } from 'pino';
import type { AuditStore } from '../../store/audit.js';
import type { Db, Queryable } from '../../store/db.js';
import type { AttemptOutcome, EndpointRecord, WebhookStore } from '../../store/webhooks/index.js';
import { afterFailure } from './retry.js';
import { afterRoundFailure, type RoundFailures } from './round-failures.js';

/**
 * What the service keeps of each attempt and round: the endpoint's position, its next attempt, the
 * delivery log, and, when an endpoint is disabled, the audit entry in the same transaction. Every
 * step is conditioned on the lease of `owner` (store/webhooks/leases.ts).
 */
export function roundRecords(deps: {
  db: Pick<Db, 'transaction'>;
  store: WebhookStore;
  audit: Pick<AuditStore, 'recordBy'>;
  logger: Logger;
  owner: string;
  /** Called after every attempt (metrics). */
  observe?: ((outcome: AttemptOutcome) => void) | undefined;
  /** Called when a round of an endpoint failed for a reason of the service's own (metrics). */
  roundFailed?: (() => void) | undefined;
}) {
  const { owner } = deps;
  /**
   * Endpoint id → its rounds in a row that failed (the wait), of them the database's refusals of
   * the round's data in a row (setting aside), and the cause last logged for it.
   */
  const roundFailures = new Map<string, RoundFailures>();

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

  return {
    /**
     * The receiver answered 2xx: the position moves past the delivery. With `release`, the lease
     * ends in the same statement and the endpoint is not looked at again for `spacingMs`. False
     * when the lease was lost meanwhile (nothing moved).
     */
    async succeeded(
      endpoint: EndpointRecord,
      outcome: AttemptOutcome,
      release: { spacingMs: number } | null,
    ): Promise<boolean> {
      deps.observe?.(outcome);
      return deps.store.acknowledge(endpoint.id, owner, outcome.deliveryId, outcome, release);
    },

    /**
     * The receiver failed: the delivery is tried again later (retry.ts says when), or, after
     * failing for long enough, the endpoint is disabled, never without its audit entry.
     */
    async failed(endpoint: EndpointRecord, outcome: AttemptOutcome): Promise<void> {
      const now = new Date();
      const failingSince = endpoint.failingSince ? new Date(endpoint.failingSince) : now;
      const decision = afterFailure(outcome.attempt, outcome.responseCode, failingSince, now);
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
    },

    /** A round ended without a failure of the service's own: its run of failed rounds is over. */
    roundOver(endpointId: string): void {
      roundFailures.delete(endpointId);
    },

    /**
     * A round the service could not finish (the database refused to record an attempt, say): the
     * endpoint waits, or is set aside (round-failures.ts says which).
     */
    async roundFailed(endpoint: EndpointRecord, error: unknown): Promise<void> {
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
    },
  };
}
