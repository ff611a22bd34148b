import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { OperatorAccess } from '../../../domain/operators.js';
import { isStorableText, STORABLE_MESSAGE } from '../../../domain/text.js';
import { auditContext } from '../../../http/audit-context.js';
import { operatorSchema, operatorWithTokenSchema } from '../../schemas/admin.js';
import { uuidParam } from '../../schemas/query.js';
import { errorResponse } from '../../schemas/responses.js';

const errors = {
  400: errorResponse,
  401: errorResponse,
  404: errorResponse,
  409: errorResponse,
  429: errorResponse,
};

/** Named operator tokens: who signs in to the admin API and the console. */
export function operatorAdminRoutes(operators: OperatorAccess): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/operators',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Operator tokens, live first (never the tokens themselves)',
          response: { 200: z.object({ data: z.array(operatorSchema) }), ...errors },
        },
      },
      async () => ({ data: await operators.list() }),
    );

    app.get(
      '/operators/me',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Who this token signs in as',
          response: {
            200: z.object({ data: z.object({ id: z.string().nullable(), name: z.string() }) }),
            ...errors,
          },
        },
      },
      async (request) => ({ data: request.operator! }),
    );

    app.post(
      '/operators',
      {
        schema: {
          tags: ['Admin'],
          summary: 'A new named operator token; the answer holds it, shown only now',
          body: z.strictObject({
            name: z
              .string()
              .trim()
              .min(1, 'must not be empty')
              .max(100, 'must be at most 100 characters')
              .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
              .refine(isStorableText, STORABLE_MESSAGE),
          }),
          response: { 201: z.object({ data: operatorWithTokenSchema }), ...errors },
        },
      },
      async (request, reply) => {
        const created = await operators.create(request.body.name, auditContext(request));
        reply.header('Cache-Control', 'no-store');
        return reply.status(201).send({ data: created });
      },
    );

    app.delete(
      '/operators/:id',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Revoke an operator token: its next request is refused',
          params: z.object({ id: uuidParam }),
          response: { 200: z.object({ data: operatorSchema }), ...errors },
        },
      },
      async (request) => ({ data: await operators.revoke(request.params.id, auditContext(request)) }),
    );
  };
}
