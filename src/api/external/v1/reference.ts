import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ENUMS } from '../../../domain/enums.js';
import { partnerMeta } from '../../../http/auth.js';
import { partnerErrors, partnerMetaSchema } from '../../schemas/responses.js';

const enumsSchema = z.record(
  z.string(),
  z.object({
    values: z.array(z.string()),
    aliases: z.record(z.string(), z.string()),
    refused: z
      .record(z.string(), z.string())
      .optional()
      .describe('Ambiguous words that are refused rather than guessed, each with the reason.'),
  }),
);

/** GET /reference/enums: every enumeration with its values and accepted aliases. */
export const referenceRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/reference/enums',
    {
      config: { scope: 'read:listings' },
      schema: {
        summary: 'Allowed values and accepted aliases of every enumerated listing field',
        description:
          'Matching is case-insensitive and ignores accents; spaces and dashes count as underscores. Dutch and French words of Belgian and Dutch dealer systems are aliases; ambiguous words (`gas`) are refused with a reason.',
        tags: ['Reference'],
        response: {
          200: z.object({ data: enumsSchema, meta: z.object({ partner: partnerMetaSchema }) }),
          ...partnerErrors,
        },
      },
    },
    async (request) => ({
      data: ENUMS as unknown as z.infer<typeof enumsSchema>,
      meta: { partner: partnerMeta(request.partner!) },
    }),
  );
};
