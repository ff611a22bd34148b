import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../../domain/errors.js';
import { IMAGE_STATES } from '../../../domain/images/classify.js';
import { type ImageHealthReads, NOT_LIVE_SHOWN } from '../../../domain/images/health.js';
import { messages } from '../../../domain/messages.js';
import type { PartnerAdmin } from '../../../domain/partners.js';
import { positiveIntParam, uuidParam } from '../../schemas/query.js';
import { imageCheckSchema, readinessSchema } from '../../schemas/resources.js';
import { errorResponse } from '../../schemas/responses.js';

const stateCounts = z.object(
  Object.fromEntries(IMAGE_STATES.map((s) => [s, z.number().int()])),
) as z.ZodObject<Record<(typeof IMAGE_STATES)[number], z.ZodNumber>>;

export const imageHealthSchema = z.object({
  images: z
    .object({
      total: z.number().int().describe('Distinct image URLs in the partner’s listings (one check each).'),
      broken: z.number().int().describe('Of them, in a state that cannot be shown: any but ok and pending.'),
      byState: stateCounts,
    })
    .describe('The images of the partner’s listings, each URL counted once however many listings use it.'),
  problems: z
    .array(
      z.object({
        state: z.enum(IMAGE_STATES),
        code: z.string().describe('The problem code (docs/images.md, "Problem codes").'),
        images: z.number().int(),
        listings: z.number().int().describe('The partner’s listings having at least one of these images.'),
      }),
    )
    .describe('Every problem of its broken images, the commonest (most images) first.'),
  listings: z.object({
    total: z.number().int(),
    active: z.number().int(),
    notLive: z.number().int().describe('Active listings that cannot go live (docs/images.md, "Readiness").'),
    reasons: z
      .array(z.object({ code: z.string(), listings: z.number().int() }))
      .describe('How many of those give each reason, the commonest first (a listing may give several).'),
  }),
  notLive: z
    .array(
      z.object({
        id: z.string(),
        externalReference: z.string(),
        title: z.string(),
        readiness: readinessSchema,
        images: z.array(z.object({ url: z.string(), position: z.number().int(), check: imageCheckSchema })),
      }),
    )
    .describe('The first active listings that cannot go live, by reference, as the partner reads them.'),
});
export type ImageHealthView = z.infer<typeof imageHealthSchema>;

/** GET /partners/{id}/image-health (docs/operations.md, "Image health"). */
export function imageHealthAdminRoutes(
  partners: Pick<PartnerAdmin, 'get'>,
  health: ImageHealthReads,
): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/partners/:id/image-health',
      {
        schema: {
          tags: ['Admin'],
          summary: "The health of a partner's images, and its active listings that cannot go live",
          description:
            'Its images by check state, the commonest problems, and the active listings that cannot go live with every reason and each image’s check (docs/operations.md, "Image health").',
          params: z.object({ id: uuidParam }),
          querystring: z.object({
            limit: positiveIntParam
              .optional()
              .describe(`Listings not live shown (default and most: ${NOT_LIVE_SHOWN}).`),
          }),
          response: {
            200: z.object({ data: imageHealthSchema }),
            400: errorResponse,
            401: errorResponse,
            404: errorResponse,
          },
        },
      },
      async (request) => {
        const partner = await partners.get(request.params.id);
        if (!partner) throw notFound(messages.noPartner(request.params.id));
        const limit = Math.min(request.query.limit ?? NOT_LIVE_SHOWN, NOT_LIVE_SHOWN);
        return { data: await health.of(partner.id, limit) };
      },
    );
  };
}
