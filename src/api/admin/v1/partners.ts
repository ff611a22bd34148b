import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ALL_SCOPES } from '../../../domain/access.js';
import { notFound } from '../../../domain/errors.js';
import type { PartnerAdmin } from '../../../domain/partners.js';
import { auditContext } from '../../../http/audit-context.js';
import { uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';
import { adminName } from './admin-fields.js';

const scopes = z.array(z.enum(ALL_SCOPES, { error: `must be one of ${ALL_SCOPES.join(', ')}` })).max(10);
const access = z.discriminatedUnion('scope', [
  z.strictObject({ scope: z.literal('global') }),
  z.strictObject({
    scope: z.literal('restricted'),
    rootProfileIds: z.array(z.uuid().toLowerCase()).min(1).max(10_000),
  }),
]);

const partnerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.string()),
    access: z.union([
      z.object({ scope: z.literal('global') }),
      z.object({ scope: z.literal('restricted'), rootProfileIds: z.array(z.string()) }),
    ]),
    rateLimitPerMinute: z.number().int().nullable(),
    disabled: z.boolean(),
    disabledReason: z.string().nullable().describe('Why an operator disabled it (cleared when enabled).'),
    lastUsedAt: z.string().nullable(),
    lastUsedKey: z
      .enum(['current', 'previous'])
      .nullable()
      .describe(
        'Which secret the last use sent: after a rotation with a grace period, whether the partner moved on.',
      ),
    previousSecretValidUntil: z
      .string()
      .nullable()
      .describe('When the previous secret stops working (a rotation with a grace period); null: none works.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Partner' });

const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 422: errorResponse };
const idParams = z.object({ id: uuidParam });

export function partnerAdminRoutes(partners: PartnerAdmin): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.post(
      '/partners',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Create a partner and issue its secret (shown only in this response)',
          body: z.object({
            name: adminName(200),
            scopes: scopes.optional(),
            access,
            rateLimitPerMinute: z.number().int().min(1).max(1_000_000).nullable().optional(),
          }),
          response: { 201: z.object({ data: partnerSchema.extend({ secret: z.string() }) }), ...errors },
        },
      },
      async (request, reply) => {
        reply.status(201).header('Cache-Control', 'no-store');
        return { data: await partners.create(request.body, auditContext(request)) };
      },
    );

    app.get(
      '/partners',
      {
        schema: { tags: ['Admin'], response: { 200: z.object({ data: z.array(partnerSchema) }), ...errors } },
      },
      async () => ({
        data: (await partners.list()).map((r) => ({
          ...r,
          access:
            r.accessScope === 'global'
              ? { scope: 'global' as const }
              : { scope: 'restricted' as const, rootProfileIds: r.rootProfileIds },
        })),
      }),
    );

    app.get(
      '/partners/:id',
      {
        schema: {
          tags: ['Admin'],
          params: idParams,
          response: { 200: z.object({ data: partnerSchema }), ...errors },
        },
      },
      async (request) => {
        const partner = await partners.get(request.params.id);
        if (!partner) throw notFound(`No partner ${request.params.id}.`);
        const { accessScope, rootProfileIds, ...rest } = partner;
        return {
          data: {
            ...rest,
            access:
              accessScope === 'global'
                ? { scope: 'global' as const }
                : { scope: 'restricted' as const, rootProfileIds },
          },
        };
      },
    );

    app.patch(
      '/partners/:id',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Change scopes, access, disabled flag or rate limit',
          params: idParams,
          body: z.object({
            name: adminName(200).optional(),
            scopes: scopes.optional(),
            access: access.optional(),
            disabled: z.boolean().optional(),
            disabledReason: adminName(500)
              .optional()
              .describe('With disabled: true: why (kept with the partner and in the audit log).'),
            rateLimitPerMinute: z.number().int().min(1).max(1_000_000).nullable().optional(),
          }),
          response: { 200: z.object({ data: partnerSchema }), ...errors },
        },
      },
      async (request) => {
        const partner = await partners.update(request.params.id, request.body, auditContext(request));
        if (!partner) throw notFound(`No partner ${request.params.id}.`);
        return { data: partner };
      },
    );

    app.post(
      '/partners/:id/rotate-secret',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Issue a new secret; the old one stops working at once, or after graceSeconds',
          params: idParams,
          // No body at all is fine (the validator then sees null): rotate with no grace period.
          body: z
            .object({
              graceSeconds: z
                .number()
                .int()
                .min(0)
                .max(30 * 86_400)
                .optional(),
            })
            .nullish(),
          response: {
            200: z.object({
              data: z.object({
                id: z.string(),
                secret: z.string(),
                previousSecretValidUntil: z.string().nullable(),
              }),
            }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const result = await partners.rotateSecret(
          request.params.id,
          request.body?.graceSeconds ?? 0,
          auditContext(request),
        );
        if (!result) throw notFound(`No partner ${request.params.id}.`);
        reply.header('Cache-Control', 'no-store');
        return { data: result };
      },
    );
  };
}
