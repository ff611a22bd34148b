import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TestData } from '../../../domain/test-data.js';
import { partnerErrors } from '../../schemas/responses.js';

/** Test mode's own operation (docs/test-mode.md): wiping the partner's test data. */
export function testDataRoutes(testData: TestData): FastifyPluginAsync {
  return async (plugin) => {
    const app = plugin.withTypeProvider<ZodTypeProvider>();
    app.delete(
      '/test-data',
      {
        config: { scope: 'write:listings' },
        schema: {
          summary: 'Wipe your test data (test secret only)',
          description:
            'Deletes every test listing of yours, with its events, at once. Only with your test secret (fc_test_…): a live secret gets 403 TEST_MODE_ONLY and nothing is deleted. Live listings are never touched.',
          tags: ['Test mode'],
          response: {
            200: z.object({
              data: z.object({
                deleted: z.number().int().describe('How many test listings were deleted.'),
              }),
            }),
            ...partnerErrors,
          },
        },
      },
      async (request) => ({ data: await testData.wipe(request.partner!) }),
    );
  };
}
