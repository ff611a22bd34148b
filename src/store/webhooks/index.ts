import type { Queryable } from '../db.js';
import { webhookAttemptStore } from './attempts.js';
import { webhookEndpointStore } from './endpoints.js';
import { webhookLeaseStore } from './leases.js';

export { CLAIM_SQL } from './leases.js';
export * from './rows.js';

/**
 * Webhook endpoints and their deliveries, in three parts along their seams: the endpoints as
 * managed (endpoints.ts), the lease protocol of deliveries (leases.ts) and the delivery log
 * (attempts.ts), over the rows of rows.ts.
 */
export function webhookStore(db: Queryable) {
  return { ...webhookEndpointStore(db), ...webhookLeaseStore(db), ...webhookAttemptStore(db) };
}

export type WebhookStore = ReturnType<typeof webhookStore>;
