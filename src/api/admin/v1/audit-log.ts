import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AuditStore } from '../../../store/audit.js';
import { dateTimeParam, positiveIntParam, uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';

const entrySchema = z
  .object({
    id: z.string(),
    at: z.string(),
    actor: z
      .string()
      .describe(
        'operator (admin API), partner (its own webhook endpoints), service, or anonymous (a failed partner authentication)',
      ),
    operator: z.string().nullable().describe("Which operator acted: a token's name, or ADMIN_TOKEN."),
    action: z
      .string()
      .describe(
        'partner.created, partner.updated, partner.disabled, partner.enabled, partner.secret_rotated, dealer.created, dealer.updated, dealers.imported, operator.created, operator.revoked, auth.failed, webhook.*',
      ),
    partnerId: z.string().nullable(),
    partnerName: z.string().nullable().describe("The partner's current name."),
    dealerId: z.string().nullable(),
    dealerCode: z.string().nullable().describe("The dealer profile's location code."),
    clientIp: z.string().nullable(),
    requestId: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEntry' });

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
              data: z.array(entrySchema),
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
        const { action, partnerId, since, until, before } = request.query;
        const limit = request.query.limit ?? 100;
        // One more than asked says whether an older page exists, so the last page ends with null.
        const rows = await audit.list({
          action,
          partnerId,
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
