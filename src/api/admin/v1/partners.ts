import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../../domain/errors.js';
import { messages } from '../../../domain/messages.js';
import type { PartnerAdmin } from '../../../domain/partners.js';
import type { RequestRecordReads } from '../../../domain/request-records/reads.js';
import { rotationOf } from '../../../domain/rotation.js';
import {
  partnerCreateSchema,
  partnerPatchSchema,
  partnerSchema,
  partnerWithSecretSchema,
  rotatedSecretSchema,
  rotationSchema,
  testSecretSchema,
} from '../../../domain/shapes/partners.js';
import { auditContext } from '../../../http/audit-context.js';
import { uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';

const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse, 422: errorResponse };
const idParams = z.object({ id: uuidParam });

/**
 * Partners for the operator. `records`: what their requests sent; "last used" is read once this
 * instance's request records are written, so it follows the partner's last request.
 */
export function partnerAdminRoutes(
  partners: PartnerAdmin,
  records: Pick<RequestRecordReads, 'keyUse' | 'written'>,
): FastifyPluginAsync {
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
      async () => {
        await records.written();
        return { data: await partners.list() };
      },
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
        await records.written();
        const partner = await partners.get(request.params.id);
        if (!partner) throw notFound(messages.noPartner(request.params.id));
        return { data: partner };
      },
    );

    app.get(
      '/partners/:id/rotation',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Whether the partner moved to the secret of its last rotation, from its requests',
          description:
            'Counts the requests each secret authenticated since the rotation, one by one (not per minute), with the first and last of each: the verdict says whether the previous secret can be retired without refusing the partner (docs/operations.md, "Rotating a secret").',
          params: idParams,
          response: { 200: z.object({ data: rotationSchema }), ...errors },
        },
      },
      async (request) => {
        const partner = await partners.get(request.params.id);
        if (!partner) throw notFound(messages.noPartner(request.params.id));
        const uses = await records.keyUse([partner.id]);
        return { data: rotationOf(partner, uses.get(partner.id) ?? []) };
      },
    );

    app.post(
      '/partners/:id/retire-previous-secret',
      {
        schema: {
          tags: ['Admin'],
          summary:
            'End a grace now: the previous secret is refused from now on; the current one keeps working',
          description:
            'For a partner that moved to its new secret (GET /partners/{id}/rotation says "moved"). 409 when no previous secret is in a grace period.',
          params: idParams,
          response: { 200: z.object({ data: partnerSchema }), ...errors, 409: errorResponse },
        },
      },
      async (request) => {
        const partner = await partners.retirePreviousSecret(request.params.id, auditContext(request));
        if (!partner) throw notFound(messages.noPartner(request.params.id));
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
        if (!partner) throw notFound(messages.noPartner(request.params.id));
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
        if (!result) throw notFound(messages.noPartner(request.params.id));
        reply.header('Cache-Control', 'no-store');
        return { data: result };
      },
    );

    app.post(
      '/partners/:id/test-secret',
      {
        schema: {
          tags: ['Admin'],
          summary:
            "Issue the partner's test secret (docs/test-mode.md); a previous one stops working at once",
          params: idParams,
          response: {
            201: z.object({ data: testSecretSchema }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const result = await partners.issueTestSecret(request.params.id, auditContext(request));
        if (!result) throw notFound(messages.noPartner(request.params.id));
        reply.code(201).header('Cache-Control', 'no-store');
        return { data: result };
      },
    );

    app.delete(
      '/partners/:id/test-secret',
      {
        schema: {
          tags: ['Admin'],
          summary: "Revoke the partner's test secret; its test data stays until wiped or expired",
          params: idParams,
          response: {
            200: z.object({ data: z.object({ id: z.string(), revoked: z.literal(true) }) }),
            ...errors,
          },
        },
      },
      async (request) => {
        const result = await partners.revokeTestSecret(request.params.id, auditContext(request));
        if (result === undefined) throw notFound(messages.noPartner(request.params.id));
        if (!result) throw notFound(messages.noTestSecret(request.params.id));
        return { data: { id: request.params.id, revoked: true as const } };
      },
    );
  };
}
