import type { FastifyPluginAsync } from 'fastify';
import type { PartnerAuthentication } from '../../../domain/authentication.js';
import type { ListingReads } from '../../../domain/listings/reads.js';
import type { ListingWrites } from '../../../domain/listings/writes/index.js';
import type { LocationReads } from '../../../domain/locations.js';
import type { RequestRecordReads } from '../../../domain/request-records/reads.js';
import type { TestData } from '../../../domain/test-data.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { partnerAuth } from '../../../http/auth.js';
import type { Metrics } from '../../../http/metrics.js';
import type { RateLimits } from '../../../http/rate-limit.js';
import { refuseUndeclaredQuery } from '../../../http/validation.js';
import type { Projection } from '../../../store/db.js';
import type { ListingJson } from '../../../store/listings/json.js';
import { eventRoutes } from './events.js';
import { listingRoutes } from './listings/reads.js';
import { listingWriteRoutes } from './listings/writes.js';
import { locationRoutes } from './locations.js';
import { referenceRoutes } from './reference.js';
import { requestRecordRoutes } from './requests.js';
import { testDataRoutes } from './test-data.js';
import { webhookRoutes } from './webhooks.js';

/** What the partner API uses: its use cases, and the HTTP layer's limits and metrics. */
export interface ExternalApi {
  authentication: PartnerAuthentication;
  listings: ListingReads;
  locations: LocationReads;
  writes: ListingWrites;
  webhooks: WebhookAdmin;
  requestRecords: RequestRecordReads;
  /** Test mode's wipe (docs/test-mode.md). */
  testData: TestData;
  /** How a listing is read for an answer: its stored read-model JSON (store/listings/json.ts). */
  listingJson: Projection<ListingJson>;
  rateLimits: RateLimits;
  metrics: Metrics;
}

/** The partner API, /api/external/v1: every route authenticates a partner and needs a scope. */
export function externalRoutes(api: ExternalApi): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', partnerAuth(api));
    app.addHook('preValidation', refuseUndeclaredQuery);
    // Partner data must never sit in a shared cache (docs/contract.md#caching). A route that supports
    // revalidation (GET /listings/{id}, with its ETag) sets its own private policy.
    app.addHook('onSend', async (_request, reply) => {
      if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    });
    await app.register(listingRoutes(api.listings, api.listingJson));
    await app.register(listingWriteRoutes(api.writes, api.metrics));
    await app.register(locationRoutes(api.locations, api.listings, api.listingJson));
    await app.register(webhookRoutes(api.webhooks));
    await app.register(eventRoutes(api.webhooks));
    await app.register(requestRecordRoutes(api.requestRecords));
    await app.register(testDataRoutes(api.testData));
    await app.register(referenceRoutes);
  };
}
