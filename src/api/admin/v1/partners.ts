import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../../domain/errors.js';
import type { PartnerAdmin } from '../../../domain/partners.js';
import {
  partnerCreateSchema,
  partnerPatchSchema,
  partnerSchema,
  partnerWithSecretSchema,
  rotatedSecretSchema,
} from '../../../domain/shapes/partners.js';
import { auditContext } from '../../../http/audit-context.js';
import { uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';

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
          body: partnerCreateSchema,
          response: { 201: z.object({ data: partnerWithSecretSchema }), ...errors },
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
      async () => ({ data: await partners.list() }),
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
        return { data: partner };
      },
    );

    app.patch(
      '/partners/:id',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Change scopes, access, disabled flag or rate limit',
          params: idParams,
          body: partnerPatchSchema,
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
            200: z.object({ data: rotatedSecretSchema }),
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
