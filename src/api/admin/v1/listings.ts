import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { referenceSchema } from '../../../domain/listings/input.js';
import type { ListingInspection, ListingInspections } from '../../../domain/listings/inspection.js';
import { booleanParam, uuidParam } from '../../schemas/query.js';
import { listingSchema } from '../../schemas/resources.js';
import { errorResponse } from '../../schemas/responses.js';

export const listingInspectionSchema = z.object({
  listing: listingSchema.describe(
    'Exactly as its partner reads it (GET /api/external/v1/listings/{id}): readiness with every reason, each image’s check.',
  ),
  partner: z.object({ id: z.string(), name: z.string() }).describe('The partner that wrote it.'),
  mode: z
    .enum(['live', 'test'])
    .describe('test: written with the partner’s test secret (docs/test-mode.md).'),
  images: z
    .array(
      z.object({
        url: z.string(),
        position: z.number().int(),
        nextCheckAt: z
          .string()
          .describe('When its check is due next; while a checker holds it, the end of that check’s lease.'),
        lastCheckedAt: z
          .string()
          .nullable()
          .describe('When a check last ran (its result’s checkedAt is when that result was first found).'),
        attempts: z.number().int().describe('Checks run on this URL, ever.'),
        failures: z
          .number()
          .int()
          .describe('Checks in a row that did not find it ok (the back-off counts them).'),
        checking: z.boolean().describe('A checker holds it now.'),
      }),
    )
    .describe(
      'Each image of the listing, in its order, with its place in the checker’s schedule (docs/images.md).',
    ),
});
export type ListingInspectionView = z.infer<typeof listingInspectionSchema>;

const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };
const description =
  'The listing as its partner reads it, with its owner, its mode and each image’s next check (docs/operations.md, "One listing").';

/** The listing's read shape is the read model's own text, parsed: the schema describes every key. */
const view = (found: ListingInspection) => ({ data: found as unknown as ListingInspectionView });

/** GET /listings/{id} and GET /partners/{id}/listings/{externalReference}: one listing, for an operator. */
export function listingAdminRoutes(inspections: ListingInspections): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/listings/:id',
      {
        schema: {
          tags: ['Admin'],
          summary: 'One listing of any partner, live or test, by its id',
          description,
          params: z.object({ id: uuidParam }),
          response: { 200: z.object({ data: listingInspectionSchema }), ...errors },
        },
      },
      async (request) => view(await inspections.byId(request.params.id)),
    );

    app.get(
      '/partners/:id/listings/:externalReference',
      {
        schema: {
          tags: ['Admin'],
          summary: "One of a partner's listings, by the partner's own reference",
          description,
          // Named as the partner API names it: a malformed one is INVALID_REFERENCE there and here.
          params: z.object({ id: uuidParam, externalReference: referenceSchema }),
          querystring: z.object({
            test: booleanParam
              .optional()
              .describe('true: the partner’s test listing with this reference; default false, its live one.'),
          }),
          response: { 200: z.object({ data: listingInspectionSchema }), ...errors },
        },
      },
      async (request) =>
        view(
          await inspections.byReference(
            request.params.id,
            request.params.externalReference,
            request.query.test ?? false,
          ),
        ),
    );
  };
}
