import type { FastifyPluginAsync } from 'fastify';
import { partnerAuth } from '../../../http/auth.js';
import { refuseUndeclaredQuery } from '../../../http/validation.js';
import type { Services } from '../../../services.js';
import { listingWriteRoutes } from './listing-writes.js';
import { listingRoutes } from './listings.js';
import { locationRoutes } from './locations.js';
import { referenceRoutes } from './reference.js';

/** The partner API, /api/external/v1: every route authenticates a partner and needs a scope. */
export function externalRoutes(services: Services): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', partnerAuth(services));
    app.addHook('preValidation', refuseUndeclaredQuery);
    // Partner data must never sit in a shared cache (decisions.md). A route that supports
    // revalidation (GET /listings/{id}, with its ETag) sets its own private policy.
    app.addHook('onSend', async (_request, reply) => {
      if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    });
    await app.register(listingRoutes(services));
    await app.register(listingWriteRoutes(services));
    await app.register(locationRoutes(services));
    await app.register(referenceRoutes);
  };
}
