import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestRecorder } from '../domain/request-records/recorder.js';
import type { Metrics } from './metrics.js';

/**
 * The listing a request's path named, when its route has one (the operator's console shows it
 * with a failed request): the external reference of a write, the id of a read. Not for an
 * unmatched path, whose params are not a listing's.
 */
function listingOf(route: string, params: unknown): string | undefined {
  if (!/\/listings\/:(externalReference|id)\b/.test(route)) return undefined;
  const p = params as { externalReference?: unknown; id?: unknown } | undefined;
  const value = p?.externalReference ?? p?.id;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Per partner: a metric series each, and the request records (failures and usage) the partner
 * and the operator read. Recording only appends to memory; the recorder writes in batches, and
 * tells the metrics what it could not write.
 */
export function registerPartnerRecords(
  app: FastifyInstance,
  recorder: RequestRecorder,
  metrics: Metrics,
  partnerApi: {
    /** The partner API's path prefix: only its requests are recorded. */
    prefix: string;
    /** The route as partners know it (the OpenAPI document's), from the pattern and the URL. */
    routeName(route: string, url: string): string;
  },
): void {
  recorder.onTrouble({
    dropped: (n) => metrics.requestRecordsDropped.inc(n),
    setAside: (n) => metrics.requestRecordsSetAside.inc(n),
    writeFailed: () => metrics.requestRecordWriteFailures.inc(),
  });
  // Written by a loop of its own (background/request-records.ts), started and stopped by runtime.ts.

  // The info series of each partner id carries its current name: a rename replaces the series
  // (two with value 1 would make every join on the partner label ambiguous).
  const namesInMetrics = new Map<string, string>();
  function nameInMetrics(partner: string, name: string): void {
    const before = namesInMetrics.get(partner);
    if (before === name) return;
    if (before !== undefined) metrics.partnerInfo.remove({ partner, name: before });
    namesInMetrics.set(partner, name);
    metrics.partnerInfo.set({ partner, name }, 1);
  }

  function record(request: FastifyRequest, status: number, route: string, durationMs: number): void {
    const partnerId = request.caller?.partnerId ?? null;
    metrics.partnerRequests.inc({ partner: partnerId ?? 'none', class: `${Math.floor(status / 100)}xx` });
    if (request.partner) nameInMetrics(request.partner.id, request.partner.name);
    recorder.record({
      requestId: request.id,
      partnerId,
      key: request.caller?.key ?? null,
      test: request.caller?.test === true,
      rotatedAt: request.caller?.rotatedAt ?? null,
      method: request.method,
      route: partnerApi.routeName(route, request.url),
      listing: listingOf(route, request.params),
      cursor: (request.query as { cursor?: unknown } | undefined)?.cursor !== undefined,
      status,
      problem: request.problem,
      durationMs,
      items: request.bulkOutcome,
    });
  }

  // On send, not on response: a partner that reads GET /requests the moment its answer arrives
  // must find the record there (onResponse may run after the client has read the answer).
  app.addHook('onSend', async (request, reply) => {
    if (!request.url.startsWith(`${partnerApi.prefix}/`)) return;
    record(request, reply.statusCode, request.routeOptions.url ?? 'unmatched', reply.elapsedTime);
  });
}
