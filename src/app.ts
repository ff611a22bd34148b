import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { type AdminApi, adminRoutes } from './api/admin/v1/index.js';
import { consolePages } from './api/console/index.js';
import { docsPage } from './api/docs/index.js';
import { type ExternalApi, externalRoutes } from './api/external/v1/index.js';
import { healthRoutes } from './api/health/index.js';
import { documentedPath, PARTNER_PREFIX } from './api/openapi/document.js';
import { openApiRoutes, registerOpenApi } from './api/openapi/index.js';
import type { LoopStats } from './background/loop.js';
import type { Config } from './config.js';
import type { RequestRecorder } from './domain/request-records/recorder.js';
import { callerAttribution } from './http/auth.js';
import { answerClientError, answerFrameworkError } from './http/client-error.js';
import { registerCompression } from './http/compression.js';
import { registerDoor } from './http/door.js';
import { registerErrorHandling } from './http/errors.js';
import { httpsServerFactory } from './http/https-server.js';
import { registerJsonBodies } from './http/json-body.js';
import { answerConnect, registerMethodNotAllowed } from './http/method-not-allowed.js';
import { createMetrics } from './http/metrics.js';
import { databaseOutages } from './http/outage.js';
import { registerPartnerRecords } from './http/partner-records.js';
import { type RequestPressure, requestPressure } from './http/pressure.js';
import { configuredRateLimits } from './http/rate-limit.js';
import { requestIdFor } from './http/request-id.js';
import { registerRequestLog } from './http/request-log.js';
import type { TlsMaterial } from './http/tls.js';
import { validatorCompiler } from './http/validation.js';
import type { Db } from './store/db.js';

export { httpsRequired } from './http/door.js';

const BODY_LIMIT = 5 * 1024 * 1024;

/** The use cases the routes call (compose.ts builds them). */
type AppUseCases = Omit<ExternalApi, 'rateLimits' | 'metrics'> &
  Omit<AdminApi, 'rateLimits' | 'metrics' | 'health'> & { requestRecorder: RequestRecorder };

interface AppOptions {
  config: Config;
  useCases: AppUseCases;
  /** For the readiness probe and the pool metrics; `replica` when reads go to one. */
  databases: { primary: Db; replica?: Db | undefined };
  tls: TlsMaterial;
  logger: Logger;
  /** The clock of the rate-limit windows: Date.now, or a test's that it moves instead of waiting. */
  now?: () => number;
  /** What the instance's background loops have done, for the metrics (background/loops.ts). */
  loopStats?: () => readonly LoopStats[];
}

/** A route as registered: its method, URL pattern and request schemas (Zod), for tools that walk every route. */
interface RouteSummary {
  method: string;
  url: string;
  schema: { params?: unknown; querystring?: unknown; body?: unknown } | undefined;
}

export type App = FastifyInstance & {
  /** Every route of the app (the hostile-text layer sends odd text to each; the admin API has no OpenAPI document). */
  routeList: readonly RouteSummary[];
  /** The app's metrics, for what runs beside it (the background loops). */
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
export async function buildApp({
  config,
  useCases,
  databases,
  tls,
  logger,
  now,
  loopStats,
}: AppOptions): Promise<App> {
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
    // A trailing slash names the same resource (docs/contract.md#paths-and-methods):
    // `/listings/?pageSize=1` is the list, not a read of the listing with an empty id.
    routerOptions: { maxParamLength: 16 * 1024, ignoreTrailingSlash: true },
    // Protocol-level refusals in our envelope, written before the connection closes.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    serverFactory: httpsServerFactory(tls, config.HEADERS_TIMEOUT_MS, (fastifyHandler) => {
      handler = fastifyHandler;
    }),
  }).withTypeProvider<ZodTypeProvider>();

  const routeList: RouteSummary[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routeList.push({ method, url: route.url, schema: route.schema });
    }
  });

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  registerJsonBodies(app as unknown as FastifyInstance);

  const door = registerDoor(app as unknown as FastifyInstance);

  // The HTTP layer's own parts: request metrics and rate limits, closed with the app.
  const metrics = createMetrics(() => databases.primary.poolStats?.(), loopStats);
  const rateLimits = configuredRateLimits(config, logger, metrics, now);
  app.addHook('onClose', () => rateLimits.close());
  const pressure = requestPressure();
  registerRequestLog(app as unknown as FastifyInstance, metrics, pressure);

  registerPartnerRecords(app as unknown as FastifyInstance, useCases.requestRecorder, metrics, {
    prefix: PARTNER_PREFIX,
    routeName: documentedRoute,
  });

  const attribute = callerAttribution({
    authentication: useCases.authentication,
    rateLimits: rateLimits.limits,
  });
  const outages = databaseOutages(
    databases.replica ? [databases.primary, databases.replica] : [databases.primary],
    logger.child({ component: 'database' }),
  );
  app.addHook('onClose', async () => outages.close());
  registerErrorHandling(
    app as unknown as FastifyInstance,
    async (request) => {
      if (request.url.startsWith(`${PARTNER_PREFIX}/`)) await attribute(request);
    },
    outages,
  );
  registerMethodNotAllowed(app as unknown as FastifyInstance);
  await registerCompression(app as unknown as FastifyInstance);
  await registerOpenApi(app as unknown as FastifyInstance);
  await app.register(healthRoutes(databases, door.draining));
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
  app.server.on('connect', answerConnect(handler));
  return Object.assign(app as unknown as FastifyInstance, {
    plainHandler: handler,
    routeList,
    metrics,
    pressure,
    startDraining: door.startDraining,
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
