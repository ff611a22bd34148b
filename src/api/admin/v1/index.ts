import type { FastifyPluginAsync } from 'fastify';
import { adminAuth } from '../../../http/auth.js';
import { refuseUndeclaredQuery } from '../../../http/validation.js';
import type { Services } from '../../../services.js';
import { auditAdminRoutes } from './audit-log.js';
import { dealerAdminRoutes } from './dealers.js';
import { metricsAdminRoutes } from './metrics.js';
import { partnerAdminRoutes } from './partners.js';

/** The operator API, /api/admin/v1, behind ADMIN_TOKEN. */
export function adminRoutes(services: Services): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', adminAuth(services.adminToken, services.rateLimits));
    app.addHook('preValidation', refuseUndeclaredQuery);
    await app.register(dealerAdminRoutes(services));
    await app.register(partnerAdminRoutes(services));
    await app.register(metricsAdminRoutes(services));
    await app.register(auditAdminRoutes(services));
  };
}
