import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { type App, buildApp, httpsRequired } from './app.js';
import { type InstanceLoops, instanceLoops } from './background/loops.js';
import { compose, type UseCases } from './compose.js';
import { type Config, ConfigError } from './config.js';
import { gzipEngine, gzipEngineNote } from './http/gzip.js';
import { createDualListener } from './http/listener.js';
import { requestIdFor } from './http/request-id.js';
import { loadTls } from './http/tls.js';
import type { Db } from './store/db.js';
import { migrate } from './store/migrate.js';
import { openConfiguredDb, openDb } from './store/open.js';
import { ensureCursorKey } from './store/service-info.js';

/** ADMIN_TOKEN, or one generated on first start into the data directory (mode 0600). */
export function resolveAdminToken(config: Config, logger: Logger): string {
  if (config.ADMIN_TOKEN) return config.ADMIN_TOKEN;
  const file = path.resolve(config.DATA_DIR, 'admin-token');
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    // Hex, not base64url: a token starting with "-" cannot follow --token on a command line
    // (the CLI's argument parser takes it for an option), which broke one run in 64.
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    logger.info({ path: file }, 'generated an admin token (ADMIN_TOKEN was not set)');
  }
  chmodSync(file, 0o600);
  return readFileSync(file, 'utf8').trim();
}

export interface Running {
  app: App;
  useCases: UseCases;
  db: Db;
  adminToken: string;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Opens the database, migrates, builds the app and listens: everything `forecourt serve` does. */
export async function start(
  config: Config,
  logger: Logger,
  /** For tests: the clock of the rate-limit windows (default Date.now). */
  options: { now?: () => number } = {},
): Promise<Running> {
  const dbOptions = {
    dataDir: config.DATA_DIR,
    statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    poolSize: config.DB_POOL_SIZE,
    poolMode: config.DATABASE_POOL_MODE,
  };
  await assertSessionsKept(config);
  const db = await openDb({
    ...dbOptions,
    databaseUrl: config.DATABASE_URL,
    directUrl: config.DATABASE_DIRECT_URL,
  });
  const readDb = config.DATABASE_READ_URL
    ? await openDb({ ...dbOptions, databaseUrl: config.DATABASE_READ_URL })
    : undefined;
  // Webhook deliveries get connections of their own (PostgreSQL; the embedded database is one).
  const deliveryDb =
    config.DATABASE_URL && config.WEBHOOK_CONCURRENCY > 0
      ? await openDb({ ...dbOptions, poolSize: WEBHOOK_POOL_SIZE, databaseUrl: config.DATABASE_URL })
      : undefined;
  let background: InstanceLoops | undefined;
  try {
    const applied = await migrateDirectly(config, db);
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    const tls = await loadTls({
      certFile: config.TLS_CERT_FILE,
      keyFile: config.TLS_KEY_FILE,
      dataDir: config.DATA_DIR,
    });
    logger.info(
      { certificate: tls.certPath, sha256: tls.fingerprint, generated: tls.generated },
      tls.generated ? 'generated a self-signed TLS certificate for localhost' : 'TLS certificate loaded',
    );
    const adminToken = resolveAdminToken(config, logger);
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    const cursorKey = await ensureCursorKey(db);
    const useCases = compose(config, db, {
      cursorKey,
      readDb,
      deliveryDb,
      adminToken,
      logger: logger.child({ component: 'request-records' }),
      publicOrigin: `https://${host}:${config.PORT}`,
    });
    const app = await buildApp({
      config,
      useCases,
      databases: { primary: db, replica: readDb },
      tls,
      logger,
      ...(options.now ? { now: options.now } : {}),
      loopStats: () => background?.stats() ?? [],
    });
    const rounds = useCases.webhookRounds(logger.child({ component: 'webhooks' }), {
      observe(outcome) {
        const result = outcome.ok ? 'succeeded' : 'failed';
        app.metrics.webhookAttempts.inc({ type: outcome.type, outcome: result });
        app.metrics.webhookDuration.observe({ outcome: result }, outcome.durationMs / 1000);
      },
      saturated: app.pressure.saturated,
      roundFailed: () => app.metrics.webhookRoundFailures.inc(),
    });
    const eventRounds = useCases.webhookEventRounds(logger.child({ component: 'webhooks' }), {
      observe(outcome) {
        const result = outcome.ok ? 'succeeded' : 'failed';
        app.metrics.webhookAttempts.inc({ type: outcome.type, outcome: result });
        app.metrics.webhookDuration.observe({ outcome: result }, outcome.durationMs / 1000);
      },
      saturated: app.pressure.saturated,
    });
    // Every loop of background work this instance runs (background/loops.ts says which).
    const loops = instanceLoops({
      config,
      db,
      replica: readDb !== undefined,
      accessCache: useCases.accessCache,
      requestRecorder: useCases.requestRecorder,
      syncHorizon: useCases.syncHorizon,
      webhooks: { rounds, events: eventRounds, saturated: app.pressure.saturated },
      imageChecks: {
        observe(state, durationMs) {
          app.metrics.imageChecks.inc({ state });
          app.metrics.imageCheckDuration.observe({ state }, durationMs / 1000);
        },
      },
      logger,
    });
    background = loops;
    await loops.start();
    const plain = config.TRUST_PROXY ? app.plainHandler : refusePlainHttp;
    const listener = createDualListener(app.server as import('node:https').Server, plain, {
      headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(config.PORT, config.HOST, () => resolve());
    });
    const port = (listener.address() as AddressInfo).port;
    const url = `https://${host}:${port}`;
    logger.info(
      { url, database: db.kind, gzip: gzipEngine, ...(gzipEngineNote ? { gzipNote: gzipEngineNote } : {}) },
      'Forecourt is listening',
    );
    let closing: Promise<void> | undefined;
    return {
      app,
      useCases,
      db,
      adminToken,
      url,
      port,
      close() {
        closing ??= (async () => {
          // Requests on open connections now get 503 + Connection: close; running ones finish;
          // the listener stops accepting and resolves once every connection is gone.
          app.startDraining();
          await listener.shutdown();
          // Deliveries in flight finish (each within WEBHOOK_TIMEOUT_MS) and release their leases;
          // the last request records are written; the connection that hears changes closes.
          await loops.stop();
          await app.close();
          await readDb?.close();
          await deliveryDb?.close();
          await db.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await background?.stop().catch(() => {});
    await readDb?.close().catch(() => {});
    await deliveryDb?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  }
}

/**
 * DATABASE_POOL_MODE=session (the default) promises that each connection of DATABASE_URL (and
 * DATABASE_READ_URL) is a session of its own; behind a pooler in transaction mode the service
 * started and then answered 500 on list pages (issue 40). Proven before anything relies on it
 * (store/postgres-sessions.ts): the mistake refuses the start, naming the setting.
 */
async function assertSessionsKept(config: Config): Promise<void> {
  if (config.DATABASE_POOL_MODE !== 'session') return;
  const urls = [
    ['DATABASE_URL', config.DATABASE_URL],
    ['DATABASE_READ_URL', config.DATABASE_READ_URL],
  ] as const;
  for (const [name, url] of urls) {
    if (!url) continue;
    const { proveSessions } = await import('./store/postgres-sessions.js');
    const verdict = await proveSessions(url, config.DB_CONNECT_TIMEOUT_MS);
    if (!verdict.sessions)
      throw new ConfigError(
        `DATABASE_POOL_MODE is session (the default), but ${name} leads to a pooler in transaction mode: ${verdict.detail}. ` +
          'Set DATABASE_POOL_MODE=transaction, and DATABASE_DIRECT_URL to the database without the pooler (docs/operations.md, "Behind a connection pooler").',
      );
  }
}

/** Migrations on a connection of their own without the pooler (DATABASE_DIRECT_URL), else on `db`. */
async function migrateDirectly(config: Config, db: Db): Promise<string[]> {
  if (!config.DATABASE_DIRECT_URL) return migrate(db);
  const direct = await openConfiguredDb(config);
  try {
    return await migrate(direct);
  } finally {
    await direct.close();
  }
}

/** PostgreSQL connections of the webhook dispatcher, besides DB_POOL_SIZE (docs/operations.md). */
const WEBHOOK_POOL_SIZE = 3;

/** A plain-HTTP request on the HTTPS port: a 403 with the error envelope, never data or a redirect. */
function refusePlainHttp(
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
): void {
  const requestId = requestIdFor(req);
  const body = JSON.stringify(httpsRequired().body(requestId));
  res.writeHead(403, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
    Connection: 'close',
  });
  res.end(body);
  req.resume();
}
