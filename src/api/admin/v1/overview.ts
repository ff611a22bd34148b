import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ATTENTION, needsAttention } from '../../../domain/attention.js';
import type { PartnerAdmin } from '../../../domain/partners.js';
import type { RequestRecordReads } from '../../../domain/request-records/reads.js';
import type { WebhookAdmin } from '../../../domain/webhooks/endpoints.js';
import { errorResponse } from '../../schemas/responses.js';

/** What the service's own parts say of themselves (the app knows its databases and Redis). */
export interface ServiceHealth {
  database: { kind: string; ok: boolean; error: string | null };
  replica: { ok: boolean; error: string | null } | null;
  rateLimitStore: { kind: 'redis' | 'memory'; ok: boolean; lastFallbackAt: string | null };
}

const check = z.object({ ok: z.boolean(), error: z.string().nullable() });

const attentionItem = z.object({
  kind: z
    .enum(['error_rate', 'grace_ending', 'retired_secret', 'webhook_failing', 'webhook_disabled'])
    .describe(
      'error_rate: a partner failed at least errorShare of its requests in the last hour (with at least errorMinRequests of them). grace_ending: a grace ends within graceEndingHours and the partner has not moved (GET /partners/{id}/rotation). retired_secret: a retired secret was tried within retiredHours. webhook_failing: an enabled endpoint whose deliveries fail. webhook_disabled: an endpoint the service or an operator disabled (not one its partner switched off).',
    ),
  partner: z.object({ id: z.string(), name: z.string() }).nullable(),
  endpoint: z.object({ id: z.string(), url: z.string() }).nullable(),
  requests: z
    .number()
    .int()
    .nullable()
    .describe('error_rate: requests in the last hour; retired_secret: tries with a retired secret.'),
  failed: z.number().int().nullable().describe('error_rate: of those requests, answered 4xx or 5xx.'),
  at: z
    .string()
    .nullable()
    .describe(
      'grace_ending: when the previous secret stops; retired_secret: the minute of the last try; webhook_failing: failing since; webhook_disabled: disabled at.',
    ),
  verdict: z.enum(['never_rotated', 'not_moved', 'moving', 'moved']).nullable(),
  reason: z.string().nullable().describe('webhook_disabled: why.'),
});
export const overviewSchema = z.object({
  traffic: z
    .object({
      perMinute: z.array(
        z.object({
          minute: z.string(),
          requests: z.number().int(),
          clientErrors: z.number().int(),
          serverErrors: z.number().int(),
          rateLimited: z.number().int(),
        }),
      ),
      activePartners: z
        .number()
        .int()
        .describe('Partners that sent a request with a live secret in the last hour.'),
    })
    .describe("Live requests only: test secrets' requests are on each partner's page, apart."),
  health: z.object({
    database: check.extend({ kind: z.string() }),
    replica: check.nullable().describe('null: no read replica configured.'),
    rateLimitStore: z.object({
      kind: z.enum(['redis', 'memory']),
      ok: z.boolean().describe('false: Redis failed in the last minute (counts fell back to this instance).'),
      lastFallbackAt: z.string().nullable(),
    }),
  }),
  attention: z.object({
    items: z.array(attentionItem).describe('Most pressing kind first; empty when nothing needs an operator.'),
    thresholds: z.object({
      errorShare: z.number(),
      errorMinRequests: z.number().int(),
      graceEndingHours: z.number(),
      retiredHours: z.number(),
    }),
  }),
  webhooks: z
    .object({
      enabled: z.number().int(),
      disabled: z.number().int(),
      failing: z.number().int().describe('Enabled, with deliveries failing (being retried).'),
      pending: z.number().int().describe('With a delivery sent and not yet acknowledged.'),
    })
    .describe('Live endpoints only: a failing test endpoint is its partner’s to mend.'),
});

export type OverviewView = z.infer<typeof overviewSchema>;

/** The service at a glance: the console's first page. */
export function overviewAdminRoutes(deps: {
  records: RequestRecordReads;
  webhooks: Pick<WebhookAdmin, 'summary' | 'listAll'>;
  partners: Pick<PartnerAdmin, 'list'>;
  health: () => Promise<ServiceHealth>;
}): FastifyPluginAsync {
  /**
   * What needs an operator now: from partners' live traffic, their rotations, and live webhook
   * endpoints (what partners do with test secrets never raises attention).
   */
  async function attention() {
    const [lastHour, lastDay, partners, endpoints] = await Promise.all([
      deps.records.perPartner(1),
      deps.records.perPartner(ATTENTION.retiredHours),
      deps.partners.list(),
      // Live endpoints only: a failing test receiver is the partner's to mend, not an incident.
      deps.webhooks.listAll(null, false),
    ]);
    const inGrace = partners.filter((p) => p.previousSecretValidUntil).map((p) => p.id);
    const keyUse = await deps.records.keyUse(inGrace);
    const items = needsAttention({ partners, lastHour, lastDay, keyUse, endpoints, now: Date.now() });
    return { items, thresholds: { ...ATTENTION } };
  }

  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/overview',
      {
        schema: {
          tags: ['Admin'],
          summary:
            'The service at a glance: requests and errors per minute (last hour), health, what needs attention, webhooks',
          response: { 200: z.object({ data: overviewSchema }), 401: errorResponse, 429: errorResponse },
        },
      },
      async () => {
        const [traffic, health, webhooks] = await Promise.all([
          deps.records.traffic(),
          deps.health(),
          deps.webhooks.summary(),
        ]);
        return { data: { traffic, health, attention: await attention(), webhooks } };
      },
    );
  };
}
