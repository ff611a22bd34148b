import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import secureJson from 'secure-json-parse';
import { type AdminApi, adminRoutes } from './api/admin/v1/index.js';
import { consolePages } from './api/console/index.js';
import { docsPage } from './api/docs/index.js';
import { type ExternalApi, externalRoutes } from './api/external/v1/index.js';
import { healthRoutes } from './api/health/index.js';
import { documentedPath, PARTNER_PREFIX } from './api/openapi/document.js';
import { openApiRoutes, registerOpenApi } from './api/openapi/index.js';
import type { Config } from './config.js';
import { type ProblemError, problem } from './domain/errors.js';
import type { RequestRecorder } from './domain/request-records/recorder.js';
import { callerAttribution } from './http/auth.js';
import { answerClientError, answerFrameworkError, watchRequestLine } from './http/client-error.js';
import { registerErrorHandling } from './http/errors.js';
import { checkingInterval } from './http/listener.js';
import { registerMethodNotAllowed } from './http/method-not-allowed.js';
import { createMetrics } from './http/metrics.js';
import { type RequestPressure, requestPressure } from './http/pressure.js';
import { configuredRateLimits } from './http/rate-limit.js';
import { requestIdFor } from './http/request-id.js';
import type { TlsMaterial } from './http/tls.js';
import { validatorCompiler } from './http/validation.js';
import type { Db } from './store/db.js';

export const BODY_LIMIT = 5 * 1024 * 1024;

/** The use cases the routes call (compose.ts builds them). */
export type AppUseCases = Omit<ExternalApi, 'rateLimits' | 'metrics'> &
  Omit<AdminApi, 'rateLimits' | 'metrics' | 'health'> & { requestRecorder: RequestRecorder };

export interface AppOptions {
  config: Config;
  useCases: AppUseCases;
  /** For the readiness probe and the pool metrics; `replica` when reads go to one. */
  databases: { primary: Db; replica?: Db | undefined };
  tls: TlsMaterial;
  logger: Logger;
}

export type App = FastifyInstance & {
  /** The app's metrics, for what runs beside it (the webhook dispatcher). */
  metrics: ReturnType<typeof createMetrics>;
  /** How busy partners' requests keep the instance: background work makes way when saturated. */
  pressure: RequestPressure;
  /** The request handler, for plain-HTTP connections that a trusted proxy forwards. */
  plainHandler: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Starts a graceful shutdown: requests already running finish; new ones on open connections get
   * 503 SERVICE_UNAVAILABLE with Connection: close, and /readyz fails so balancers stop sending.
   */
  startDraining(): void;
};

/** Builds the whole service as one Fastify app; server.ts starts it, tests build the very same. */
export async function buildApp({ config, useCases, databases, tls, logger }: AppOptions): Promise<App> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const app = Fastify({
    loggerInstance: logger,
    // One log line per request, written by our onResponse hook with partner and route.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.TRUST_PROXY,
    // Draining is ours (see startDraining): Fastify's own 503 body is not our error envelope.
    return503OnClosing: false,
    // Long enough for any path the header limit lets through: an over-long reference is then
    // refused by the reference rule (400 INVALID_REFERENCE), not by the router.
    routerOptions: { maxParamLength: 16 * 1024 },
    // Protocol-level refusals in our envelope, written before the connection closes.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    serverFactory: (fastifyHandler) => {
      handler = fastifyHandler;
      const server = https.createServer(
        {
          key: tls.key,
          cert: tls.cert,
          minVersion: 'TLSv1.2',
          // A missing Host is refused by our own hook (onRequest below) with the envelope;
          // Node's own check answers a bare 400.
          requireHostHeader: false,
          // How often Node checks for clients past the header and request timeouts; its default
          // (30 s) would let a slow client hold a connection three times HEADERS_TIMEOUT_MS.
          connectionsCheckingInterval: checkingInterval(config.HEADERS_TIMEOUT_MS),
        },
        fastifyHandler,
      );
      server.on('secureConnection', watchRequestLine);
      return server;
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Our own JSON parser: an empty body is "no body" (DELETE from some clients sends a content type
  // anyway), and a broken one is the documented INVALID_JSON rather than a generic 400.
  // Fastify also parses text/plain by default; we take JSON only, so anything else is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (typeof body !== 'string' || body.trim() === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(body, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch (error) {
      done(
        problem('INVALID_JSON', `The request body is not valid JSON: ${(error as Error).message}`),
        undefined,
      );
    }
  });

  let draining = false;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    assertOneHost(request.raw);
    if (draining) {
      reply.header('Connection', 'close');
      if (request.url !== '/healthz') {
        throw problem('SERVICE_UNAVAILABLE', 'The service is restarting; retry shortly.');
      }
    }
    // Behind a TLS-terminating proxy, the connection to us is plain; the proxy says what the client used.
    const socket = request.raw.socket as { encrypted?: boolean };
    if (!socket.encrypted) {
      const proto = String(request.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]!
        .trim()
        .toLowerCase();
      if (proto !== 'https') throw httpsRequired();
    }
  });

  // The HTTP layer's own parts: request metrics and rate limits, closed with the app.
  const metrics = createMetrics(() => databases.primary.poolStats?.());
  const rateLimits = configuredRateLimits(config, logger, metrics);
  app.addHook('onClose', () => rateLimits.close());
  const pressure = requestPressure();
  app.addHook('onRequest', async (_request, reply) => {
    pressure.started();
    // 'close' comes for every response, sent or aborted, exactly once.
    reply.raw.once('close', pressure.finished);
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw path: unknown paths must not create a metric series each.
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

  // Per partner: a metric series each, and the request records (failures and usage) the partner
  // and the operator read. Recording only appends to memory; the recorder writes in batches.
  const recorder = useCases.requestRecorder;
  recorder.onDropped((n) => metrics.requestRecordsDropped.inc(n));
  recorder.start();
  app.addHook('onClose', () => recorder.stop());
  // On send, not on response: a partner that reads GET /requests the moment its answer arrives
  // must find the record there (onResponse may run after the client has read the answer).
  app.addHook('onSend', async (request, reply) => {
    if (!request.url.startsWith(`${PARTNER_PREFIX}/`)) return;
    recordPartnerRequest(
      request,
      reply.statusCode,
      request.routeOptions.url ?? 'unmatched',
      reply.elapsedTime,
    );
  });
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
  function recordPartnerRequest(
    request: FastifyRequest,
    status: number,
    route: string,
    durationMs: number,
  ): void {
    const partnerId = request.caller?.partnerId ?? null;
    metrics.partnerRequests.inc({ partner: partnerId ?? 'none', class: `${Math.floor(status / 100)}xx` });
    if (request.partner) nameInMetrics(request.partner.id, request.partner.name);
    recorder.record({
      requestId: request.id,
      partnerId,
      key: request.caller?.key ?? null,
      method: request.method,
      route: documentedRoute(route, request.url),
      status,
      problem: request.problem,
      durationMs,
      items: request.bulkOutcome,
    });
  }
  app.addHook('onSend', async (_request, reply) => {
    // Connections finishing a request while draining close after it, so shutdown is not held
    // up by clients keeping connections alive.
    if (draining) reply.header('Connection', 'close');
  });

  const attribute = callerAttribution({
    authentication: useCases.authentication,
    rateLimits: rateLimits.limits,
  });
  registerErrorHandling(app as unknown as FastifyInstance, async (request) => {
    if (request.url.startsWith(`${PARTNER_PREFIX}/`)) await attribute(request);
  });
  registerMethodNotAllowed(app as unknown as FastifyInstance);
  await registerOpenApi(app as unknown as FastifyInstance);
  await app.register(healthRoutes(databases, () => draining));
  await app.register(openApiRoutes);
  await app.register(docsPage);
  await app.register(consolePages);
  await app.register(externalRoutes({ ...useCases, rateLimits: rateLimits.limits, metrics }), {
    prefix: PARTNER_PREFIX,
  });
  await app.register(
    adminRoutes({
      ...useCases,
      rateLimits: rateLimits.limits,
      metrics,
      health: async () => ({
        database: { kind: databases.primary.kind, ...(await probe(databases.primary)) },
        replica: databases.replica ? await probe(databases.replica) : null,
        rateLimitStore: rateLimits.store(),
      }),
    }),
    {
      prefix: '/api/admin/v1',
    },
  );
  await app.ready();
  if (!handler) throw new Error('Fastify did not call serverFactory');
  return Object.assign(app as unknown as FastifyInstance, {
    plainHandler: handler,
    metrics,
    pressure,
    startDraining: () => {
      draining = true;
    },
  });
}

/** Whether a database answers, and if not, why. */
async function probe(db: Db): Promise<{ ok: boolean; error: string | null }> {
  try {
    await db.ping();
    return { ok: true, error: null };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/**
 * The route as the OpenAPI document writes it (`/listings/{listing}`); for a path no route
 * matched, the path as sent (its first 200 characters, marked when cut).
 */
function documentedRoute(route: string, url: string): string {
  if (route !== 'unmatched') return documentedPath(route.slice(PARTNER_PREFIX.length));
  const path = url.split('?')[0]!.slice(PARTNER_PREFIX.length);
  return path.length > 200 ? `${path.slice(0, 200)}… (${path.length} characters)` : path;
}

/**
 * HTTP/1.1 requires exactly one Host header (RFC 9112 §3.2). Node keeps only the first of two, so
 * two that disagree could route differently in a proxy and here: refuse both shapes.
 */
function assertOneHost(raw: IncomingMessage): void {
  if (raw.httpVersion !== '1.1') return;
  let hosts = 0;
  for (let i = 0; i < raw.rawHeaders.length; i += 2) if (raw.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts !== 1) {
    throw problem(
      'BAD_REQUEST',
      hosts === 0 ? 'The request has no Host header.' : 'The request has more than one Host header.',
    );
  }
}

export function httpsRequired(): ProblemError {
  return problem(
    'HTTPS_REQUIRED',
    'This API is served over HTTPS only. Resend the request to https:// (never send a secret over plain HTTP).',
  );
}
