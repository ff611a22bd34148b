import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problem } from '../../domain/errors.js';
import { messages } from '../../domain/messages.js';
import type { Db } from '../../store/db.js';
import { pendingMigrations } from '../../store/migrate.js';
import { errorResponse } from '../schemas/responses.js';

const ok = z.object({ status: z.literal('ok') });

/**
 * Probes for load balancers and orchestrators: unauthenticated, cheap, never rate limited.
 * /healthz says the process answers (restart it if not); /readyz says it should get traffic.
 */
export function healthRoutes(
  databases: { primary: Db; replica?: Db | undefined },
  isDraining: () => boolean,
): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const notReady = (why: string) => problem('SERVICE_UNAVAILABLE', messages.notReady(why));

    app.get(
      '/healthz',
      { schema: { tags: ['Health'], summary: 'Liveness: the process is up', response: { 200: ok } } },
      async (_request, reply) => {
        reply.header('Cache-Control', 'no-store');
        return { status: 'ok' as const };
      },
    );

    app.get(
      '/readyz',
      {
        schema: {
          tags: ['Health'],
          summary: 'Readiness: database reachable, migrations applied, not shutting down',
          response: {
            200: ok.extend({
              database: z.string(),
              // Not a reason to take the instance out: it serves, reading access per request.
              partnerAccess: z
                .object({
                  cached: z.boolean(),
                  detail: z.string(),
                })
                .describe(
                  "Whether this instance keeps partners' access (secrets, scopes, dealers) between requests: only while changes are proven to reach it (a notification it sent itself came back)",
                ),
            }),
            503: errorResponse,
          },
        },
      },
      async (_request, reply) => {
        reply.header('Cache-Control', 'no-store');
        // A draining instance says so first, so the balancer stops sending before it closes.
        if (isDraining()) throw notReady('shutting down');
        let pending: string[];
        try {
          pending = await pendingMigrations(databases.primary);
        } catch {
          throw notReady('the database is unreachable');
        }
        if (databases.replica) {
          await databases.replica.ping().catch(() => {
            throw notReady('the read replica (DATABASE_READ_URL) is unreachable');
          });
        }
        if (pending.length) throw notReady(`migrations not applied: ${pending.join(', ')}`);
        const listening = databases.primary.listening();
        return {
          status: 'ok' as const,
          database: databases.primary.kind,
          partnerAccess: { cached: listening.live, detail: listening.detail },
        };
      },
    );
  };
}
