import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { metricsText } from '../../../http/metrics.js';

/** Prometheus text exposition, for a scraper holding the admin token (bearer_token in its config). */
export function metricsAdminRoutes(registry: Registry): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/metrics',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Prometheus metrics: requests, latency, database pool, rate limits, bulk outcomes',
          produces: ['text/plain'],
        },
      },
      async (_request, reply) => {
        reply.header('Content-Type', registry.contentType).header('Cache-Control', 'no-store');
        return metricsText(registry);
      },
    );
  };
}
