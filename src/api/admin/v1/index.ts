import type { FastifyPluginAsync } from 'fastify';
import type { DealerAdmin } from '../../../domain/dealers.js';
import type { ImageHealthReads } from '../../../domain/images/health.js';
import type { ListingInspections } from '../../../domain/listings/inspection.js';
import type { OperatorAccess } from '../../../domain/operators.js';
import type { PartnerAdmin } from '../../../domain/partners.js';
import type { RequestRecordReads } from '../../../domain/request-records/reads.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { adminAuth } from '../../../http/auth.js';
import type { Metrics } from '../../../http/metrics.js';
import type { RateLimits } from '../../../http/rate-limit.js';
import { refuseUndeclaredQuery } from '../../../http/validation.js';
import type { AuditStore } from '../../../store/audit.js';
import { auditAdminRoutes } from './audit-log.js';
import { dealerAdminRoutes } from './dealers.js';
import { imageHealthAdminRoutes } from './image-health.js';
import { listingAdminRoutes } from './listings.js';
import { metricsAdminRoutes } from './metrics.js';
import { operatorAdminRoutes } from './operators.js';
import { overviewAdminRoutes, type ServiceHealth } from './overview.js';
import { partnerAdminRoutes } from './partners.js';
import { requestAdminRoutes } from './requests.js';
import { webhookAdminRoutes } from './webhooks.js';

/** What the operator API uses. */
export interface AdminApi {
  operators: OperatorAccess;
  dealers: DealerAdmin;
  partners: PartnerAdmin;
  webhooks: WebhookAdmin;
  /** Each partner's images and listings that cannot go live (docs/operations.md, "Image health"). */
  imageHealth: ImageHealthReads;
  /** One listing of any partner, live or test (docs/operations.md, "One listing"). */
  listingInspections: ListingInspections;
  auditLog: Pick<AuditStore, 'list'>;
  requestRecords: RequestRecordReads;
  rateLimits: RateLimits;
  metrics: Metrics;
  /** The databases' and Redis's state, from the app (which holds them). */
  health: () => Promise<ServiceHealth>;
  /** Partners' access kept by this instance may be stale: forget it (domain/access-cache.ts). */
  accessChanged: () => void;
}

/** The operator API, /api/admin/v1, behind an operator token (or ADMIN_TOKEN). */
export function adminRoutes(api: AdminApi): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', adminAuth(api.operators, api.rateLimits));
    app.addHook('preValidation', refuseUndeclaredQuery);
    // Operators' answers hold partner data (names, scopes, failed requests): never in a shared
    // cache, nor in the browser's (docs/contract.md#caching).
    app.addHook('onSend', async (_request, reply) => {
      reply.header('Cache-Control', 'no-store');
    });
    // A write that succeeded has committed; the operator's answer waits until this instance has
    // forgotten what partners could do before (others hear it by notification, in milliseconds).
    app.addHook('onSend', async (request, reply) => {
      if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode < 400)
        api.accessChanged();
    });
    await app.register(dealerAdminRoutes(api.dealers));
    await app.register(partnerAdminRoutes(api.partners, api.requestRecords));
    await app.register(imageHealthAdminRoutes(api.partners, api.imageHealth));
    await app.register(listingAdminRoutes(api.listingInspections));
    await app.register(metricsAdminRoutes(api.metrics.registry));
    await app.register(auditAdminRoutes(api.auditLog));
    await app.register(webhookAdminRoutes(api.webhooks));
    await app.register(requestAdminRoutes(api.requestRecords));
    await app.register(operatorAdminRoutes(api.operators));
    await app.register(
      overviewAdminRoutes({
        records: api.requestRecords,
        webhooks: api.webhooks,
        partners: api.partners,
        health: api.health,
      }),
    );
  };
}
