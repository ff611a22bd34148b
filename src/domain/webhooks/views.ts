import type { AttemptRecord, EndpointRecord, WebhookStore } from '../../store/webhooks/index.js';
import type { CursorCodec } from '../cursor.js';
import type { DeliveryView, EndpointFilter, EndpointView } from '../shapes/webhooks.js';
import { endpointFingerprint } from './payload.js';

/*
 * Webhook endpoints and their delivery log as partners and operators see them, and the log's
 * pages: shared by the partner's half (endpoints.ts) and the operator's (operator.ts).
 */

/** Endpoints one partner may have: each is a walk the service keeps for it. */
export const MAX_ENDPOINTS_PER_PARTNER = 20;
/** How long a rotated-away secret keeps signing beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 200;

export interface EndpointInput {
  url: string;
  description?: string | null | undefined;
  filter?: Partial<EndpointFilter> | null | undefined;
  /** The event types to subscribe to (default: DEFAULT_EVENTS). */
  events?: readonly string[] | undefined;
}

export function endpointView(record: EndpointRecord): EndpointView {
  return {
    id: record.id,
    partnerId: record.partnerId,
    test: record.test,
    url: record.url,
    description: record.description,
    filter: { status: record.filterStatuses, dealerProfileIds: record.filterProfileIds },
    events: record.events as EndpointView['events'],
    enabled: record.enabled,
    disabledReason: record.disabledReason,
    disabledAt: record.disabledAt,
    failingSince: record.failingSince,
    pendingDelivery: record.pending
      ? {
          webhookId: `msg_${record.pending.deliveryId}`,
          attempt: record.pending.attempt,
          nextAttemptAt: record.nextAttemptAt,
        }
      : null,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function deliveryView(attempt: AttemptRecord): DeliveryView {
  const { endpointId: _endpoint, deliveryId, position: _position, ...shown } = attempt;
  return { ...shown, type: shown.type as DeliveryView['type'], webhookId: `msg_${deliveryId}` };
}

const DELIVERY_CURSOR = (endpointId: string) => `deliveries:${endpointFingerprint(endpointId)}`;

/** One page of an endpoint's delivery log, newest first, with the cursor of the next. */
export async function deliveryPage(
  deps: { store: Pick<WebhookStore, 'attempts'>; cursors: CursorCodec },
  endpointId: string,
  page: { pageSize: number; cursor: string | undefined },
) {
  const pageSize = Math.min(page.pageSize, MAX_DELIVERY_PAGE);
  const before =
    page.cursor === undefined ? null : deps.cursors.decode(page.cursor, DELIVERY_CURSOR(endpointId));
  const rows = await deps.store.attempts(endpointId, pageSize + 1, before);
  const shown = rows.slice(0, pageSize);
  const hasMore = rows.length > pageSize;
  return {
    data: shown.map(deliveryView),
    pagination: {
      pageSize,
      hasMore,
      ...(hasMore
        ? { nextCursor: deps.cursors.encode(shown[shown.length - 1]!.position, DELIVERY_CURSOR(endpointId)) }
        : {}),
    },
  };
}
