import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { AuditContext, AuditStore } from '../../store/audit.js';
import type { Db, Queryable } from '../../store/db.js';
import type { DealerStore } from '../../store/dealers.js';
import { eventStore } from '../../store/events.js';
import type { SyncHorizonStore } from '../../store/sync-horizon.js';
import {
  type EndpointPatch,
  type EndpointRecord,
  NIL_UUID,
  type WebhookStore,
} from '../../store/webhooks/index.js';
import { type Access, assertInScope } from '../access.js';
import type { CursorCodec, Position } from '../cursor.js';
import { fieldProblem, problem } from '../errors.js';
import { eventFeed } from '../events/feed.js';
import { DEFAULT_EVENTS } from '../events/registry.js';
import { checkSubscription, walksOf } from '../events/subscription.js';
import { messages } from '../messages.js';
import type { EndpointFilter } from '../shapes/webhooks.js';
import { webhookOperator } from './operator.js';
import { endpointFingerprint } from './payload.js';
import { sendPing } from './ping.js';
import { generateWebhookSecret } from './signing.js';
import { checkTarget } from './target.js';
import {
  deliveryPage,
  type EndpointInput,
  endpointView,
  MAX_ENDPOINTS_PER_PARTNER,
  ROTATION_GRACE_MS,
} from './views.js';

interface WebhookAdminDeps {
  db: Db;
  store: WebhookStore;
  dealers: Pick<DealerStore, 'existing'>;
  audit: Pick<AuditStore, 'recordBy' | 'record'>;
  syncHorizon: Pick<SyncHorizonStore, 'current'>;
  cursors: CursorCodec;
  post: PostWebhook;
  allowPrivate: boolean;
  /** The demo: loopback addresses (with http) admitted, nothing else private (WEBHOOK_ALLOW_LOOPBACK). */
  allowLoopback?: boolean;
}

interface Caller {
  id: string;
  /** The request sent the partner's test secret: its test endpoints only (docs/test-mode.md). */
  test: boolean;
  access: Access;
}

/** The partner's half of webhook endpoints (partner API): its own, to create, change, test and replay. */
function webhookEndpoints(deps: WebhookAdminDeps) {
  const notFound = (id: string) => problem('NOT_FOUND', messages.noWebhookEndpoint(id));

  /** The caller's endpoint; another partner's is answered like an unknown one. */
  async function own(partner: Caller, id: string): Promise<EndpointRecord> {
    const record = await deps.store.get(id);
    // An endpoint of the other mode is answered like an unknown one: the two are listed apart.
    if (!record || record.partnerId !== partner.id || record.test !== partner.test) throw notFound(id);
    return record;
  }

  /** An endpoint the operator disabled stays disabled until the operator enables it. */
  function assertNotHeld(record: EndpointRecord) {
    if (record.heldByOperator) {
      throw problem('CONFLICT', messages.endpointHeldByOperator(record.disabledReason));
    }
  }

  async function checkFilter(partner: Caller, filter: Partial<EndpointFilter> | null | undefined) {
    const ids = filter?.dealerProfileIds ?? null;
    if (ids) {
      assertInScope(partner.access, ids);
      const known = await deps.dealers.existing(ids);
      // Unknown ids get the scope's answer: ids cannot be probed.
      assertInScope({ scope: 'restricted', rootProfileIds: [], profileIds: [...known] }, ids);
    }
    return {
      filterStatuses: filter?.status ? [...new Set(filter.status)] : null,
      filterProfileIds: ids ? [...new Set(ids)] : null,
    };
  }

  /** A change to one of the partner's endpoints and its audit entry, in one transaction. */
  const audited = <T>(
    partner: Caller,
    id: string,
    entry: { action: string; details?: Record<string, unknown> },
    ctx: AuditContext,
    change: (tx: Queryable) => Promise<T | undefined>,
  ): Promise<T> =>
    deps.db.transaction(async (tx) => {
      const result = await change(tx);
      if (result === undefined) throw notFound(id);
      const details = { endpointId: id, ...entry.details };
      await deps.audit.recordBy('partner', { action: entry.action, partnerId: partner.id, details }, ctx, tx);
      return result;
    });

  /** Where a walk starts: the commit horizon, so every change committed after now is delivered. */
  async function startPosition(): Promise<Position> {
    const horizon = await deps.syncHorizon.current();
    return { ts: horizon === '-infinity' ? new Date().toISOString() : horizon, id: NIL_UUID };
  }

  return {
    async create(partner: Caller, input: EndpointInput, ctx: AuditContext) {
      const url = await checkTarget(input.url, deps.allowPrivate, deps.allowLoopback);
      const filter = await checkFilter(partner, input.filter);
      if ((await deps.store.countForPartner(partner.id)) >= MAX_ENDPOINTS_PER_PARTNER) {
        throw problem('VALIDATION_FAILED', messages.tooManyEndpoints(MAX_ENDPOINTS_PER_PARTNER), [
          {
            path: '(root)',
            message: `at most ${MAX_ENDPOINTS_PER_PARTNER} endpoints`,
            code: 'too_many_endpoints',
          },
        ]);
      }
      const events = input.events === undefined ? DEFAULT_EVENTS : checkSubscription(input.events);
      // It starts at the commit horizon: every change committed after this answer is delivered
      // (and a few from just before it, which is harmless: deliveries are at least once).
      const start = await startPosition();
      const secret = generateWebhookSecret();
      const record = await deps.db.transaction(async (tx) => {
        const created = await deps.store.create(
          {
            partnerId: partner.id,
            test: partner.test,
            url,
            description: input.description ?? null,
            ...filter,
            events,
            secret,
          },
          start,
          tx,
        );
        await deps.audit.recordBy(
          'partner',
          { action: 'webhook.created', partnerId: partner.id, details: { endpointId: created.id, url } },
          ctx,
          tx,
        );
        return created;
      });
      return { ...endpointView(record), secret };
    },

    async list(partner: Caller) {
      return (await deps.store.list(partner.id, partner.test)).map(endpointView);
    },

    async get(partner: Caller, id: string) {
      return endpointView(await own(partner, id));
    },

    async update(
      partner: Caller,
      id: string,
      input: Partial<EndpointInput> & { enabled?: boolean | undefined },
      ctx: AuditContext,
    ) {
      const current = await own(partner, id);
      if (input.enabled === true) assertNotHeld(current);
      const patch: EndpointPatch = { enabled: input.enabled };
      if (input.url !== undefined)
        patch.url = await checkTarget(input.url, deps.allowPrivate, deps.allowLoopback);
      if (input.description !== undefined) patch.description = input.description;
      if (input.filter !== undefined) {
        const filter = await checkFilter(partner, input.filter);
        patch.filterStatuses = filter.filterStatuses;
        patch.filterProfileIds = filter.filterProfileIds;
      }
      // A walk subscribed to again starts at the horizon, as a new endpoint's would: what changed
      // while it was not subscribed is not sent.
      const restart: { listings?: Position; events?: string } = {};
      if (input.events !== undefined) {
        patch.events = checkSubscription(input.events);
        const before = walksOf(current.events);
        const after = walksOf(patch.events);
        if ((after.listings && !before.listings) || (after.outbox && !before.outbox)) {
          const start = await startPosition();
          if (after.listings && !before.listings) restart.listings = start;
          if (after.outbox && !before.outbox) restart.events = start.ts;
        }
      }
      const changed = Object.keys(input);
      const record = await audited(
        partner,
        id,
        { action: 'webhook.updated', details: { changed } },
        ctx,
        (tx) => deps.store.update(id, patch, tx, restart),
      );
      return endpointView(record);
    },

    async remove(partner: Caller, id: string, ctx: AuditContext) {
      await own(partner, id);
      await audited(partner, id, { action: 'webhook.deleted' }, ctx, async (tx) =>
        (await deps.store.remove(id, tx)) ? true : undefined,
      );
    },

    async rotateSecret(partner: Caller, id: string, ctx: AuditContext) {
      await own(partner, id);
      const secret = generateWebhookSecret();
      const graceUntil = new Date(Date.now() + ROTATION_GRACE_MS);
      const record = await audited(partner, id, { action: 'webhook.secret_rotated' }, ctx, (tx) =>
        deps.store.rotate(id, secret, graceUntil, tx),
      );
      return { ...endpointView(record), secret, previousSecretExpiresAt: graceUntil.toISOString() };
    },

    /**
     * Sends a signed `ping` now and answers with the attempt: a receiver's set-up is checked in
     * one call. It does not touch the endpoint's walk, and works on a disabled endpoint too.
     */
    async test(partner: Caller, id: string, type?: string) {
      return sendPing(deps, await own(partner, id), type);
    },

    /**
     * Starts a disabled endpoint again from where it stopped (the delivery that was failing is
     * sent first), or, with a `cursor` from an earlier delivery, replays every change after it.
     */
    async resume(partner: Caller, id: string, cursor: string | undefined, ctx: AuditContext) {
      assertNotHeld(await own(partner, id));
      const position = cursor === undefined ? null : decodeCursor(deps.cursors, cursor, id);
      const entry = { action: 'webhook.resumed', details: { replay: position !== null } };
      const record = await audited(partner, id, entry, ctx, (tx) => deps.store.resume(id, position, tx));
      return endpointView(record);
    },

    async deliveries(partner: Caller, id: string, page: { pageSize: number; cursor: string | undefined }) {
      await own(partner, id);
      return deliveryPage(deps, id, page);
    },
  };
}

/** Managing webhook endpoints: a partner its own (partner API), an operator any (admin API). */
export function webhookAdmin(deps: WebhookAdminDeps) {
  // GET /events reads the outbox the endpoints walk, on the same database and horizon.
  const eventPage = eventFeed({
    events: eventStore(deps.db),
    syncHorizon: deps.syncHorizon,
    cursors: deps.cursors,
  });
  return { ...webhookEndpoints(deps), ...webhookOperator(deps), eventPage };
}

export type WebhookAdmin = ReturnType<typeof webhookAdmin>;

/** A delivery's cursor, sent back to replay from it: refused at `cursor` unless this endpoint issued it. */
function decodeCursor(cursors: CursorCodec, cursor: string, endpointId: string): Position {
  let position: Position | null = null;
  try {
    position = cursors.decode(cursor, endpointFingerprint(endpointId));
  } catch {
    // Decoding failed: malformed, altered, or another endpoint's (its fingerprint differs).
  }
  if (!position) {
    throw fieldProblem('VALIDATION_FAILED', 'cursor', messages.notDeliveryCursor(), 'invalid_cursor');
  }
  return position;
}
