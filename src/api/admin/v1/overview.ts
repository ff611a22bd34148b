import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestRecordReads } from '../../../domain/request-records/reads.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { errorResponse } from '../../schemas/responses.js';

/** What the service's own parts say of themselves (the app knows its databases and Redis). */
export interface ServiceHealth {
  database: { kind: string; ok: boolean; error: string | null };
  replica: { ok: boolean; error: string | null } | null;
  rateLimitStore: { kind: 'redis' | 'memory'; ok: boolean; lastFallbackAt: string | null };
}

const check = z.object({ ok: z.boolean(), error: z.string().nullable() });
export const overviewSchema = z.object({
  traffic: z.object({
    perMinute: z.array(
      z.object({
        minute: z.string(),
        requests: z.number().int(),
        clientErrors: z.number().int(),
        serverErrors: z.number().int(),
        rateLimited: z.number().int(),
      }),
    ),
    activePartners: z.number().int().describe('Partners that sent a request in the last hour.'),
  }),
  health: z.object({
    database: check.extend({ kind: z.string() }),
    replica: check.nullable().describe('null: no read replica configured.'),
    rateLimitStore: z.object({
      kind: z.enum(['redis', 'memory']),
      ok: z.boolean().describe('false: Redis failed in the last minute (counts fell back to this instance).'),
      lastFallbackAt: z.string().nullable(),
    }),
  }),
  webhooks: z.object({
    enabled: z.number().int(),
    disabled: z.number().int(),
    failing: z.number().int().describe('Enabled, with deliveries failing (being retried).'),
    pending: z.number().int().describe('With a delivery sent and not yet acknowledged.'),
  }),
});

export type OverviewView = z.infer<typeof overviewSchema>;

/** The service at a glance: the console's first page. */
export function overviewAdminRoutes(deps: {
  records: RequestRecordReads;
  webhooks: Pick<WebhookAdmin, 'summary'>;
  health: () => Promise<ServiceHealth>;
}): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/overview',
      {
        schema: {
          tags: ['Admin'],
          summary: 'The service at a glance: requests and errors per minute (last hour), health, webhooks',
          response: { 200: z.object({ data: overviewSchema }), 401: errorResponse, 429: errorResponse },
        },
      },
      async () => {
        const [traffic, health, webhooks] = await Promise.all([
          deps.records.traffic(),
          deps.health(),
          deps.webhooks.summary(),
        ]);
        return { data: { traffic, health, webhooks } };
      },
    );
  };
}
