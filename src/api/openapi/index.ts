import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { PARTNER_PREFIX, swaggerOptions } from './document.js';

/**
 * Collects every route's schema as it is registered; so it must be registered before the routes.
 * @fastify/swagger is not encapsulated: it sees the whole app.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, swaggerOptions);
}

/**
 * GET /api/external/v1/openapi.json: the partner document, public (no secret needed: it is what a
 * partner reads before it has one). Built once, on the first request, after every route exists.
 */
export const openApiRoutes: FastifyPluginAsync = async (app) => {
  let body: string | undefined;
  app.get(`${PARTNER_PREFIX}/openapi.json`, { schema: { hide: true } }, async (_request, reply) => {
    body ??= JSON.stringify(app.swagger());
    return reply
      .type('application/json; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .send(body);
  });
};
