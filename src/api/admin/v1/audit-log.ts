import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AuditStore } from '../../../store/audit.js';
import { auditEntrySchema } from '../../schemas/admin.js';
import { dateTimeParam, positiveIntParam, textParam, uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';

export function auditAdminRoutes(audit: Pick<AuditStore, 'list'>): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/audit-log',
      {
        schema: {
          tags: ['Admin'],
          summary: 'The audit log, newest first: operator actions and failed partner authentications',
          querystring: z.object({
            action: z
              .string()
              .regex(
                /^[a-z_.]{1,64}$/,
                'must be an action such as partner.created, or a prefix such as partner.',
              )
              .optional(),
            partnerId: uuidParam.optional(),
            actor: z
              .enum(['operator', 'partner', 'service', 'anonymous'], {
                error: 'must be operator, partner, service or anonymous',
              })
              .optional()
              .describe('Only entries of this kind of actor.'),
            operator: textParam(100)
              .optional()
              .describe("Only this operator's actions: a token's name, or ADMIN_TOKEN (exact)."),
            since: dateTimeParam.optional(),
            until: dateTimeParam.optional(),
            before: z
              .string()
              .regex(/^\d{1,18}$/, 'must be an entry id')
              .optional(),
            limit: positiveIntParam.pipe(z.number().max(500, 'must be at most 500')).optional(),
          }),
          response: {
            200: z.object({
              data: z.array(auditEntrySchema),
              pagination: z.object({
                nextBefore: z
                  .string()
                  .nullable()
                  .describe('pass as before= for the next (older) page; null when there is none'),
              }),
            }),
            400: errorResponse,
            401: errorResponse,
          },
        },
      },
      async (request) => {
        const { action, partnerId, actor, operator, since, until, before } = request.query;
        const limit = request.query.limit ?? 100;
        // One more than asked says whether an older page exists, so the last page ends with null.
        const rows = await audit.list({
          action,
          partnerId,
          actor,
          operator,
          since: since?.toISOString(),
          until: until?.toISOString(),
          before,
          limit: limit + 1,
        });
        const data = rows.slice(0, limit);
        return { data, pagination: { nextBefore: rows.length > limit ? data.at(-1)!.id : null } };
      },
    );
  };
}
