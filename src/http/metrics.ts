import cluster from 'node:cluster';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { droppedLogLines } from '../log.js';
import type { PoolStats } from '../store/db.js';

export const METRICS_REQUEST = 'forecourt:metrics-request';
export const METRICS_ANSWER = 'forecourt:metrics';
let asked = 0;

/**
 * The metrics text a scrape gets: this process's, or, in a worker of `WORKERS=N` (src/cluster.ts),
 * every worker's added up by the primary, so a scrape that lands on any worker sees the whole.
 */
export function metricsText(registry: Registry): Promise<string> {
  if (!cluster.isWorker) return registry.metrics();
  const id = ++asked;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onAnswer);
      reject(new Error("the primary process did not answer with the workers' metrics in 5 s"));
    }, 5_000);
    const onAnswer = (message: { type?: string; id?: number; text?: string; error?: string }) => {
      if (message?.type !== METRICS_ANSWER || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onAnswer);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.text ?? '');
    };
    process.on('message', onAnswer);
    // With a callback, a primary already gone fails this request rather than emitting an 'error'
    // nobody hears (which would end the worker instead of letting it drain).
    process.send!({ type: METRICS_REQUEST, id }, undefined, {}, (error) => {
      if (!error) return;
      clearTimeout(timer);
      process.off('message', onAnswer);
      reject(new Error(`the primary process is gone (${error.message})`));
    });
  });
}

/** What the metrics read of each background loop (LoopStats of background/loop.ts). */
interface LoopFigures {
  name: string;
  passes: number;
  failures: number;
  passMsTotal: number;
  lastSuccessAt: number | null;
}

/**
 * The service's Prometheus metrics, in a registry of its own (one per app, so tests can boot several
 * apps in one process). Served on the admin API only: partners never see them. `loopStats`: what
 * the instance's background loops have done (background/loops.ts), read at each scrape.
 */
export function createMetrics(
  poolStats: () => PoolStats | undefined,
  loopStats: () => readonly LoopFigures[] = () => [],
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'forecourt_' });
  const labels = ['method', 'route', 'status'] as const;
  return {
    registry,
    requests: new Counter({
      name: 'forecourt_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: labels,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'forecourt_http_request_duration_seconds',
      help: 'Time from request received to response sent, by method, route pattern and status code',
      labelNames: labels,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'forecourt_rate_limit_rejections_total',
      help: 'Requests refused with 429: kind "partner" (per-partner limit) or "auth_failures" (per client address), by partner id ("none" when no partner is known)',
      labelNames: ['kind', 'partner'] as const,
      registers: [registry],
    }),
    // Partner labels are partner ids: the operator creates partners, so the series stay as few as
    // the partners (a client cannot add one); "none" holds requests that name no partner.
    partnerRequests: new Counter({
      name: 'forecourt_partner_requests_total',
      help: 'Partner API requests answered, by partner id and status class (2xx, 3xx, 4xx, 5xx)',
      labelNames: ['partner', 'class'] as const,
      registers: [registry],
    }),
    partnerInfo: new Gauge({
      name: 'forecourt_partner_info',
      help: 'Always 1: the name of each partner id seen by this instance, to join on the partner label',
      labelNames: ['partner', 'name'] as const,
      registers: [registry],
      // Added up over the workers of WORKERS=N it would count them; it is 1.
      aggregator: 'max',
    }),
    requestRecordsDropped: new Counter({
      name: 'forecourt_request_records_dropped_total',
      help: 'Request records not written because the database was unreachable for too long (the buffer was full)',
      registers: [registry],
    }),
    requestRecordsSetAside: new Counter({
      name: 'forecourt_request_records_set_aside_total',
      help: 'Request records the database refused one by one: logged with their request id and not kept',
      registers: [registry],
    }),
    requestRecordWriteFailures: new Counter({
      name: 'forecourt_request_record_write_failures_total',
      help: 'Failed writes of a batch of request records (the batch is tried again after a back-off)',
      registers: [registry],
    }),
    rateLimitFallbacks: new Counter({
      name: 'forecourt_rate_limit_store_fallbacks_total',
      help: 'Rate-limit hits counted in process because Redis was unreachable or slow',
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'forecourt_auth_failures_total',
      help: 'Partner requests refused with 401, by reason and by the partner the secret belongs to ("none" when it names none)',
      labelNames: ['reason', 'partner'] as const,
      registers: [registry],
    }),
    webhookRoundFailures: new Counter({
      name: 'forecourt_webhook_round_failures_total',
      help: 'Delivery rounds the service itself could not finish (the endpoint waits, longer each time, and is set aside after 5 refusals in a row)',
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'forecourt_webhook_attempts_total',
      help: 'Webhook delivery attempts of the dispatcher, by type and outcome (succeeded, failed); test pings are in the delivery log only',
      labelNames: ['type', 'outcome'] as const,
      registers: [registry],
    }),
    webhookDuration: new Histogram({
      name: 'forecourt_webhook_attempt_duration_seconds',
      help: 'Time from connecting to a webhook receiver to its answer (or the failure), by outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    imageChecks: new Counter({
      name: 'forecourt_image_checks_total',
      help: 'Image checks this instance ran to the end, by the state found (docs/images.md); a rate of it is checks a second',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    imageCheckDuration: new Histogram({
      name: 'forecourt_image_check_duration_seconds',
      help: 'Time an image check took, from the fetch to its classification, by the state found',
      labelNames: ['state'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
      registers: [registry],
    }),
    bulkItems: new Counter({
      name: 'forecourt_bulk_items_total',
      help: 'Bulk-upsert items by outcome (created, updated, unchanged, failed); dry runs excluded',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    logLinesDropped: new Counter({
      name: 'forecourt_log_lines_dropped_total',
      help: 'Log lines dropped because stdout was not taking them and LOG_BUFFER_BYTES was full, or stdout had failed (with WORKERS=N: summed over the workers)',
      registers: [registry],
      collect() {
        // The count lives with the process's one stdout (src/log.ts), not with this registry.
        this.reset();
        this.inc(droppedLogLines());
      },
    }),
    loopPasses: new Counter({
      name: 'forecourt_background_passes_total',
      help: 'Passes of each background loop (docs/operations.md, "Background loops"), failed ones included',
      labelNames: ['loop'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of loopStats()) this.inc({ loop: s.name }, s.passes);
      },
    }),
    loopFailures: new Counter({
      name: 'forecourt_background_failures_total',
      help: 'Passes of each background loop that failed (the loop then backs off)',
      labelNames: ['loop'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of loopStats()) this.inc({ loop: s.name }, s.failures);
      },
    }),
    loopSeconds: new Counter({
      name: 'forecourt_background_pass_seconds_total',
      help: 'Time spent in passes of each background loop (divided by its passes: the mean duration of a pass)',
      labelNames: ['loop'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of loopStats()) this.inc({ loop: s.name }, s.passMsTotal / 1000);
      },
    }),
    loopLastSuccess: new Gauge({
      name: 'forecourt_background_last_success_timestamp_seconds',
      help: 'When a pass of each background loop last succeeded (Unix time; with WORKERS=N the oldest of the workers)',
      labelNames: ['loop'] as const,
      registers: [registry],
      // The worker furthest behind is the one to see: a newer one would hide it.
      aggregator: 'min',
      collect() {
        this.reset();
        for (const s of loopStats())
          if (s.lastSuccessAt !== null) this.set({ loop: s.name }, s.lastSuccessAt / 1000);
      },
    }),
    pool: new Gauge({
      name: 'forecourt_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting = requests queued for one)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = poolStats();
        if (!stats) return;
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
