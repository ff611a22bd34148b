import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DealerAdmin, DealerTreeNode } from '../../../domain/dealers.js';
import { notFound } from '../../../domain/errors.js';
import { auditContext } from '../../../http/audit-context.js';
import { uuidParam } from '../../schemas/query.js';
import { dealerSchema, errorResponse } from '../../schemas/responses.js';
import { adminName, adminText, metadataField } from './admin-fields.js';

const text = adminText;

const dealerFields = {
  locationCode: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[\w.-]+$/, 'may contain letters, digits, ".", "-" and "_" only'),
  parentId: z.uuid().nullable().optional(),
  parentLocationCode: adminName(64).optional(),
  companyName: text(200),
  fullName: text(200),
  displayName: text(200),
  email: z.email().nullable().optional(),
  phone: text(50),
  address: text(300),
  postalCode: text(20),
  city: text(100),
  province: text(100),
  logoUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .nullable()
    .optional(),
  metadata: metadataField,
};

// Strict: a misspelt field (dispayName) is refused with a suggestion, never dropped.
const dealerBody = z.strictObject(dealerFields);
const dealerPatch = z.strictObject(dealerFields).partial();

type Node = z.infer<typeof dealerBody> & { children?: Node[] | undefined };
const treeNode: z.ZodType<Node> = z.lazy(() =>
  dealerBody.extend({ children: z.array(treeNode).max(10_000).optional() }),
);

const errors = {
  400: errorResponse,
  401: errorResponse,
  404: errorResponse,
  409: errorResponse,
  422: errorResponse,
};

export function dealerAdminRoutes(dealers: DealerAdmin): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.post(
      '/dealers',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Create a dealer profile',
          body: dealerBody,
          response: { 201: z.object({ data: dealerSchema }), ...errors },
        },
      },
      async (request, reply) => {
        reply.status(201);
        return { data: await dealers.create(request.body, auditContext(request)) };
      },
    );

    app.post(
      '/dealers/import',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Create or update a whole dealer tree by location code, in one transaction',
          body: z.strictObject({ dealers: z.array(treeNode).min(1).max(10_000) }),
          response: {
            200: z.object({
              data: z.object({
                created: z.number().int(),
                updated: z.number().int().describe('Existing profiles whose content changed.'),
                unchanged: z.number().int().describe('Existing profiles sent exactly as stored.'),
                dealers: z.array(dealerSchema),
              }),
            }),
            ...errors,
          },
        },
      },
      async (request) => ({
        data: await dealers.importTree(request.body.dealers as DealerTreeNode[], auditContext(request)),
      }),
    );

    app.get(
      '/dealers',
      {
        schema: {
          tags: ['Admin'],
          summary: 'List all dealer profiles',
          response: { 200: z.object({ data: z.array(dealerSchema) }), ...errors },
        },
      },
      async () => ({ data: await dealers.list() }),
    );

    app.get(
      '/dealers/:id',
      {
        schema: {
          tags: ['Admin'],
          params: z.object({ id: uuidParam }),
          response: { 200: z.object({ data: dealerSchema }), ...errors },
        },
      },
      async (request) => {
        const dealer = await dealers.get(request.params.id);
        if (!dealer) throw notFound(`No dealer profile ${request.params.id}.`);
        return { data: dealer };
      },
    );

    app.patch(
      '/dealers/:id',
      {
        schema: {
          tags: ['Admin'],
          summary: 'Change a dealer profile; a parent change that would make a cycle is refused',
          params: z.object({ id: uuidParam }),
          body: dealerPatch,
          response: { 200: z.object({ data: dealerSchema }), ...errors },
        },
      },
      async (request) => {
        const dealer = await dealers.update(request.params.id, request.body, auditContext(request));
        if (!dealer) throw notFound(`No dealer profile ${request.params.id}.`);
        return { data: dealer };
      },
    );
  };
}
