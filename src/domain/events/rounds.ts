import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { AuditStore } from '../../store/audit.js';
import type { Db } from '../../store/db.js';
import type { DealerStore } from '../../store/dealers.js';
import type { EventPosition, EventRecord, EventStore } from '../../store/events.js';
import type { PartnerStore } from '../../store/partners.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import type { EventStreamRecord, WebhookEventStreamStore } from '../../store/webhooks/event-streams.js';
import type { AttemptOutcome, EndpointRecord, WebhookStore } from '../../store/webhooks/index.js';
import { endpointMode, type Mode } from '../access.js';
import { keptAnswer } from '../webhooks/answer.js';
import { afterFailure } from '../webhooks/retry.js';
import { endpointScope, retryIdentity, scopeKey } from '../webhooks/scope.js';
import { signingSecrets, webhookHeaders } from '../webhooks/signing.js';
import { OUTBOX_EVENT_TYPES } from './registry.js';

/** At most this many events per delivery, all of one type. */
export const EVENT_BATCH_SIZE = 100;
/** One lease delivers at most this many batches in a row, then lets the others have a turn. */
const BATCHES_PER_LEASE = 20;
/** A caught-up walk waits this long before its next look (events meanwhile go together). */
const DELIVERY_SPACING_MS = 1000;
/** A partner that is disabled or lost a scope: its walk is looked at again after this. */
const PAUSED_RECHECK_MS = 60_000;
/** A round the service could not finish (a database error): the walk waits this long. */
const ROUND_FAILED_WAIT_MS = 5_000;
/** How long the outbox keeps an event. */
export const EVENT_RETENTION_DAYS = 30;

export interface EventRoundDeps {
  db: Pick<Db, 'transaction'>;
  endpoints: Pick<WebhookStore, 'get'>;
  streams: WebhookEventStreamStore;
  events: Pick<EventStore, 'page' | 'prune'>;
  syncHorizon: Pick<SyncHorizonStore, 'current'>;
  partners: Pick<PartnerStore, 'get'>;
  dealers: Pick<DealerStore, 'subtree'>;
  audit: Pick<AuditStore, 'recordBy'>;
  post: PostWebhook;
  logger: Logger;
  observe?: ((outcome: AttemptOutcome) => void) | undefined;
  saturated?: (() => boolean) | undefined;
  leaseMs: number;
}

interface EventDelivery {
  deliveryId: string;
  type: string;
  through: EventPosition;
  attempt: number;
  events: EventRecord[];
  retry: boolean;
  /** What it was read under (scopeKey), kept with it while it waits for a retry. */
  scope: string;
  /** A retry read under another scope: it goes out under a new id, replacing this pending one. */
  replaces?: string | undefined;
  /** It took every settled event there was: the walk is caught up after it. */
  caughtUp: boolean;
}

/**
 * The body of a delivery of events: `{"type", "data"}`, `data` the events of that one type in
 * walk order, each its envelope and its own fields (registry.ts has their schema).
 */
export function eventsBody(type: string, events: readonly EventRecord[]): string {
  const data = events.map((e) =>
    JSON.stringify({
      id: `evt_${e.id}`,
      occurredAt: e.occurredAt,
      listingId: e.listingId,
      externalReference: e.externalReference,
      ...e.data,
    }),
  );
  return `{"type":${JSON.stringify(type)},"data":[${data.join(',')}]}`;
}

/**
 * Delivery rounds of the events outbox (docs/webhooks.md, "Ordering"). Each endpoint walks the
 * outbox in (stamp, seq) order behind the commit horizon, like the walk of listings: a delivery is
 * the next stretch of events of one type in its scope and subscription; it is retried until a 2xx
 * and nothing after it is sent meanwhile, so events reach a receiver in order, per listing and
 * overall. Leases on the walks' rows share the work between instances (store/webhooks/event-streams.ts).
 */
export function eventRounds(deps: EventRoundDeps) {
  const owner = randomUUID();
  const { leaseMs, streams } = deps;

  async function nextDelivery(
    stream: EventStreamRecord,
    filter: { mode: Mode; types: string[]; profileIds: string[] | null; statuses: string[] | null },
  ): Promise<EventDelivery | { advanceTo: EventPosition | null }> {
    const scope = scopeKey({ ...filter });
    if (stream.pending) {
      // The same stretch again: events never change, so it carries what it carried (less what
      // the scope no longer covers). When the partner's scope widened since (an operator's
      // change), the stretch may hold events it did not, of another type or past what a
      // delivery carries: then this retry ends where its run of one type ends, so that
      // acknowledging it never moves the position past events it left out; they follow.
      const rows = await deps.events.page(filter, EVENT_BATCH_SIZE + 1, {
        after: stream.position,
        through: stream.pending.through,
        horizon: null,
      });
      const type = rows[0]?.type ?? '';
      const otherType = rows.findIndex((r) => r.type !== type);
      const run = rows.slice(0, Math.min(otherType === -1 ? rows.length : otherType, EVENT_BATCH_SIZE));
      return {
        ...retryIdentity(stream.pending, scope),
        scope,
        type,
        through: run.length < rows.length ? run[run.length - 1]!.position : stream.pending.through,
        attempt: stream.pending.attempt + 1,
        events: run,
        retry: true,
        caughtUp: false,
      };
    }
    // The horizon first, in a statement of its own (store/sync-horizon.ts says why).
    const horizon = await deps.syncHorizon.current();
    const rows = await deps.events.page(filter, EVENT_BATCH_SIZE, {
      after: stream.position,
      through: null,
      horizon,
    });
    const firstUnsettled = rows.findIndex((r) => !r.settled);
    const settled = firstUnsettled === -1 ? rows : rows.slice(0, firstUnsettled);
    if (settled.length === 0) {
      const passable = horizon !== '-infinity' && horizon > stream.position.ts;
      return { advanceTo: passable ? { ts: horizon, seq: '0' } : null };
    }
    const type = settled[0]!.type;
    const otherType = settled.findIndex((r) => r.type !== type);
    const batch = otherType === -1 ? settled : settled.slice(0, otherType);
    return {
      deliveryId: randomUUID(),
      type,
      through: batch[batch.length - 1]!.position,
      // Within a failure streak (a retry found nothing left to carry) the attempts go on.
      attempt: stream.streakAttempts + 1,
      events: batch,
      retry: false,
      scope,
      caughtUp: batch.length === settled.length && settled.length < EVENT_BATCH_SIZE,
    };
  }

  async function send(endpoint: EndpointRecord, delivery: EventDelivery): Promise<AttemptOutcome> {
    const body = eventsBody(delivery.type, delivery.events);
    const headers = webhookHeaders(signingSecrets(endpoint), `msg_${delivery.deliveryId}`, body);
    const result = keptAnswer(await deps.post(endpoint.url, headers, body));
    const ok = result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
    return {
      deliveryId: delivery.deliveryId,
      type: delivery.type,
      attempt: delivery.attempt,
      ok,
      listingCount: delivery.events.length,
      responseCode: result.status,
      responseBody: result.body,
      error: ok ? null : (result.error ?? `the endpoint answered ${result.status}, not 2xx`),
      durationMs: result.durationMs,
      nextAttemptAt: null,
    };
  }

  /** A failed attempt: retried with the endpoint's back-off (retry.ts), or the endpoint disabled. */
  async function failed(endpoint: EndpointRecord, stream: EventStreamRecord, outcome: AttemptOutcome) {
    const now = new Date();
    const failingSince = stream.failingSince ? new Date(stream.failingSince) : now;
    const decision = afterFailure(outcome.attempt, outcome.responseCode, failingSince, now);
    const recorded: AttemptOutcome = {
      ...outcome,
      nextAttemptAt: 'retryAt' in decision ? decision.retryAt : null,
    };
    deps.observe?.(recorded);
    const disable = 'disable' in decision ? decision.disable : null;
    const moved = await deps.db.transaction(async (tx) => {
      const done = await streams.fail(endpoint.id, owner, recorded, disable, tx);
      if (done && disable) {
        await deps.audit.recordBy(
          'service',
          {
            action: 'webhook.disabled',
            partnerId: endpoint.partnerId,
            details: { endpointId: endpoint.id, url: endpoint.url, reason: disable },
          },
          { requestId: 'webhook-dispatcher' },
          tx,
        );
      }
      return done;
    });
    if (moved && disable) {
      deps.logger.warn(
        { webhookEndpoint: endpoint.id, partnerId: endpoint.partnerId, reason: disable },
        'webhook endpoint disabled',
      );
    }
  }

  /** Delivers for one leased walk until it is caught up, fails, has had its turn, or `stopping()`. */
  async function serve(claimed: EventStreamRecord, stopping: () => boolean): Promise<void> {
    let stream = claimed;
    let released = false;
    try {
      const endpoint = await deps.endpoints.get(stream.endpointId);
      if (!endpoint?.enabled) return;
      const scope = await endpointScope(deps, endpoint);
      if (!scope) {
        await streams.postpone(stream.endpointId, owner, new Date(Date.now() + PAUSED_RECHECK_MS));
        return;
      }
      const types = endpoint.events.filter((name) =>
        (OUTBOX_EVENT_TYPES as readonly string[]).includes(name),
      );
      // A test endpoint walks its partner's test events only, a live one live events only.
      const filter = { mode: endpointMode(endpoint), types, ...scope };
      for (let batch = 0; batch < BATCHES_PER_LEASE && !stopping(); batch++) {
        if (batch > 0 && deps.saturated?.()) return;
        const next = await nextDelivery(stream, filter);
        if ('advanceTo' in next) {
          await streams.advance(stream.endpointId, owner, next.advanceTo, DELIVERY_SPACING_MS);
          return;
        }
        if (next.events.length === 0) {
          // A retried stretch the endpoint no longer receives anything of: passed.
          if (!(await streams.acknowledge(stream.endpointId, owner, next.replaces ?? next.deliveryId, null)))
            return;
          // The streak goes on (acknowledge.ts): the attempts the stretch had, kept with it.
          const streakAttempts = stream.failingSince ? (stream.pending?.attempt ?? 0) : 0;
          stream = { ...stream, position: next.through, pending: null, streakAttempts };
          continue;
        }
        const begun = await streams.begin(stream.endpointId, owner, leaseMs, {
          deliveryId: next.deliveryId,
          from: stream.position,
          through: next.through,
          retry: next.retry,
          scope: next.scope,
          replaces: next.replaces,
        });
        if (!begun) return;
        const outcome = await send(endpoint, next);
        if (!outcome.ok) {
          await failed(
            endpoint,
            {
              ...stream,
              pending: {
                deliveryId: next.deliveryId,
                through: next.through,
                attempt: next.attempt,
                scope: next.scope,
              },
            },
            outcome,
          );
          return;
        }
        deps.observe?.(outcome);
        const release = next.caughtUp ? { spacingMs: DELIVERY_SPACING_MS } : null;
        if (!(await streams.acknowledge(stream.endpointId, owner, next.deliveryId, outcome, release))) return;
        if (next.caughtUp) {
          released = true;
          return;
        }
        stream = { ...stream, position: next.through, pending: null, failingSince: null, streakAttempts: 0 };
      }
    } catch (error) {
      deps.logger.warn(
        { err: error, webhookEndpoint: stream.endpointId },
        'webhook event delivery round failed',
      );
      await streams
        .postpone(stream.endpointId, owner, new Date(Date.now() + ROUND_FAILED_WAIT_MS))
        .catch(() => {});
    } finally {
      if (!released) await streams.release(stream.endpointId, owner).catch(() => {});
    }
  }

  return {
    owner,
    /** Leases up to `limit` walks that are due and have something to send. */
    claim: (limit: number) => streams.claim(owner, leaseMs, limit, OUTBOX_EVENT_TYPES),
    /** Never rejects. */
    serve: (stream: EventStreamRecord, stopping: () => boolean) =>
      serve(stream, stopping).catch((error: unknown) =>
        deps.logger.warn(
          { err: error, webhookEndpoint: stream.endpointId },
          'webhook event delivery round failed',
        ),
      ),
    /** Deletes events past their retention. */
    prune: () => deps.events.prune(EVENT_RETENTION_DAYS),
  };
}

export type EventRounds = ReturnType<typeof eventRounds>;
