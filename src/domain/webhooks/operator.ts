import type { PostWebhook } from '../../outbound/webhook-post.js';
import type { AuditContext, AuditStore } from '../../store/audit.js';
import type { Db } from '../../store/db.js';
import type { WebhookStore } from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import { problem } from '../errors.js';
import { messages } from '../messages.js';
import { sendPing } from './ping.js';
import { deliveryPage, endpointView } from './views.js';

interface WebhookOperatorDeps {
  db: Db;
  store: WebhookStore;
  audit: Pick<AuditStore, 'record'>;
  cursors: CursorCodec;
  post: PostWebhook;
}

/** The operator's half of webhook endpoints (admin API): any partner's, to see, stop and start. */
export function webhookOperator(deps: WebhookOperatorDeps) {
  const notFound = (id: string) => problem('NOT_FOUND', messages.noWebhookEndpoint(id));
  return {
    /** Operator: every endpoint, or one partner's; of one mode (`test`), or of both (null). */
    async listAll(partnerId: string | null, test: boolean | null = null) {
      return (await deps.store.list(partnerId, test)).map(endpointView);
    },

    async getAny(id: string) {
      const record = await deps.store.get(id);
      if (!record) throw notFound(id);
      return endpointView(record);
    },

    /** Operator: how many endpoints deliver, are disabled, are failing, have a delivery in flight. */
    summary: () => deps.store.summary(),

    async deliveriesOfAny(id: string, page: { pageSize: number; cursor: string | undefined }) {
      if (!(await deps.store.get(id))) throw notFound(id);
      return deliveryPage(deps, id, page);
    },

    /** Operator: stops an endpoint's deliveries; the partner sees why and may resume it. */
    async disable(id: string, reason: string | undefined, ctx: AuditContext) {
      const why = reason ? `disabled by the operator: ${reason}` : 'disabled by the operator';
      const record = await deps.db.transaction(async (tx) => {
        const disabled = await deps.store.disable(id, why, true, tx);
        if (!disabled) throw notFound(id);
        await deps.audit.record(
          {
            action: 'webhook.disabled',
            partnerId: disabled.partnerId,
            details: { endpointId: id, url: disabled.url, reason: why },
          },
          ctx,
          tx,
        );
        return disabled;
      });
      return endpointView(record);
    },

    /**
     * Operator: a signed ping now, to see what the receiver answers today, without touching the
     * endpoint's deliveries (and without disabling it first).
     */
    async testAny(id: string, type?: string) {
      const record = await deps.store.get(id);
      if (!record) throw notFound(id);
      return sendPing(deps, record, type);
    },

    /**
     * Operator: the failed delivery an enabled endpoint waits to retry is sent now, not after its
     * back-off (up to an hour): the receiver is fixed, and the partner need not see a disable.
     */
    async retryNow(id: string, ctx: AuditContext) {
      const record = await deps.db.transaction(async (tx) => {
        const due = await deps.store.retryNow(id, tx);
        if (!due) return undefined;
        await deps.audit.record(
          { action: 'webhook.retried', partnerId: due.partnerId, details: { endpointId: id, url: due.url } },
          ctx,
          tx,
        );
        return due;
      });
      if (record) return endpointView(record);
      const found = await deps.store.get(id);
      if (!found) throw notFound(id);
      throw problem(
        'CONFLICT',
        found.enabled ? messages.nothingToRetry(id) : messages.retryDisabledEndpoint(id),
      );
    },

    /** Operator: enables an endpoint again (one it disabled, or any other), from where it stopped. */
    async enable(id: string, ctx: AuditContext) {
      const record = await deps.db.transaction(async (tx) => {
        const enabled = await deps.store.resume(id, null, tx);
        if (!enabled) throw notFound(id);
        await deps.audit.record(
          {
            action: 'webhook.enabled',
            partnerId: enabled.partnerId,
            details: { endpointId: id, url: enabled.url },
          },
          ctx,
          tx,
        );
        return enabled;
      });
      return endpointView(record);
    },
  };
}
