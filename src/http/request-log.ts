import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';
import type { RequestPressure } from './pressure.js';

/**
 * One log line and the request metrics per answered request, by route pattern (never the raw
 * path: unknown paths must not create a metric series each); and how busy requests keep the
 * instance (background work makes way when it is saturated).
 */
export function registerRequestLog(app: FastifyInstance, metrics: Metrics, pressure: RequestPressure): void {
  app.addHook('onRequest', async (_request, reply) => {
    pressure.started();
    // 'close' comes for every response, sent or aborted, exactly once.
    reply.raw.once('close', pressure.finished);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    request.log.info(
      {
        partnerId: request.partner?.id,
        method: request.method,
        route,
        status,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        // "Why did my request fail?" answered from the log: the code and how many issues.
        ...(request.problem
          ? { errorCode: request.problem.code, issueCount: request.problem.issues?.length ?? 0 }
          : {}),
      },
      'request',
    );
    const labels = { method: request.method, route, status };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, reply.elapsedTime / 1000);
  });
}
