import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DealerAdmin, DealerTreeNode } from '../../../domain/dealers.js';
import { notFound } from '../../../domain/errors.js';
import { messages } from '../../../domain/messages.js';
import { dealerName, dealerText, metadataField } from '../../../domain/shapes/admin-fields.js';
import { isStorableText, STORABLE_MESSAGE } from '../../../domain/text.js';
import { auditContext } from '../../../http/audit-context.js';
import { uuidParam } from '../../schemas/query.js';
import { dealerSchema, errorResponse } from '../../schemas/responses.js';

// A dealer's text: the admin text rule and the C1 rule (src/domain/text.ts).
const text = dealerText;

const dealerFields = {
  locationCode: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[\w.-]+$/, 'may contain letters, digits, ".", "-" and "_" only'),
  parentId: z.uuid().nullable().optional(),
  parentLocationCode: dealerName(64).optional(),
  companyName: text(200),
  fullName: text(200),
  displayName: text(200),
  email: z.email().nullable().optional(),
  phone: text(50),
  address: text(300),
  postalCode: text(20),
  city: text(100),
  province: text(100),
  // Checked as text before the URL parser sees it: the parser drops a tab or a line break and
  // percent-encodes a NUL, and its answer is what would be stored. Refused, as every text is
  // (src/domain/text.ts).
  logoUrl: z
    .string()
    .max(2048)
    .refine(isStorableText, STORABLE_MESSAGE)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
    .refine((v) => !/[\u0000-\u0020\u007f-\u009f]/.test(v), 'must not contain spaces or control characters')
    .pipe(z.url({ protocol: /^https?$/ }))
    .nullable()
    .optional(),
  metadata: metadataField,
};

// Strict: a misspelt field (dispayName) is refused with a suggestion, never dropped.
const dealerBody = z.strictObject(dealerFields);
const dealerPatch = z.strictObject(dealerFields).partial();

type Node = z.infer<typeof dealerBody> & { children?: Node[] | undefined };

/**
 * The most profiles one import holds, at every level together: it runs in one transaction, a
 * few statements a profile, and a 5 MiB body could hold 200,000 (found 2026-11-30).
 */
const IMPORT_MAX = 10_000;

/** The profiles of a tree, counted without recursion. */
function countNodes(roots: readonly Node[]): number {
  let count = 0;
  const stack = [...roots];
  for (let node = stack.pop(); node; node = stack.pop()) {
    count++;
    for (const child of node.children ?? []) stack.push(child);
  }
  return count;
}
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

const moveImpactSchema = z
  .object({
    dealer: z.object({ id: z.string(), locationCode: z.string() }),
    newParent: z.object({ id: z.string(), locationCode: z.string() }).nullable(),
    profilesMoved: z.number().int().describe('The profile and every profile under it.'),
    gains: z
      .array(z.object({ id: z.string(), name: z.string() }))
      .describe('Restricted partners that would see them and do not now.'),
    loses: z
      .array(z.object({ id: z.string(), name: z.string() }))
      .describe('Restricted partners that see them now and would no longer.'),
  })
  .meta({ id: 'DealerMoveImpact' });

export type DealerView = z.infer<typeof dealerSchema>;
export type MoveImpactView = z.infer<typeof moveImpactSchema>;

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
          body: z
            .strictObject({ dealers: z.array(treeNode).min(1).max(IMPORT_MAX) })
            .superRefine((body, ctx) => {
              const count = countNodes(body.dealers);
              if (count > IMPORT_MAX)
                ctx.addIssue({
                  code: 'custom',
                  path: ['dealers'],
                  message: `at most ${IMPORT_MAX} profiles in one import (this has ${count}): import the tree in parts, parents first (each part may name its parents by parentLocationCode)`,
                });
            }),
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
        if (!dealer) throw notFound(messages.noDealerProfile(request.params.id));
        return { data: dealer };
      },
    );

    app.get(
      '/dealers/:id/move-impact',
      {
        schema: {
          tags: ['Admin'],
          summary:
            'Which partners would gain or lose a profile (and those under it) if it moved; nothing is changed',
          params: z.object({ id: uuidParam }),
          querystring: z.object({
            parentLocationCode: dealerName(64).optional().describe('The new parent; absent: the top level.'),
          }),
          response: { 200: z.object({ data: moveImpactSchema }), ...errors },
        },
      },
      async (request) => ({
        data: await dealers.moveImpact(request.params.id, request.query.parentLocationCode),
      }),
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
        if (!dealer) throw notFound(messages.noDealerProfile(request.params.id));
        return { data: dealer };
      },
    );
  };
}
