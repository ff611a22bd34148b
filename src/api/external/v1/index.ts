import type { FastifyPluginAsync } from 'fastify';
import { partnerAuth } from '../../../http/auth.js';
import type { Services } from '../../../services.js';
import { listingWriteRoutes } from './listing-writes.js';
import { listingRoutes } from './listings.js';
import { locationRoutes } from './locations.js';
import { referenceRoutes } from './reference.js';

/** The partner API, /api/external/v1: every route authenticates a partner and needs a scope. */
export function externalRoutes(services: Services): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', partnerAuth(services));
    await app.register(listingRoutes(services));
    await app.register(listingWriteRoutes(services));
    await app.register(locationRoutes(services));
    await app.register(referenceRoutes);
  };
}
