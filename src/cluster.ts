import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from './config.js';
import { METRICS_ANSWER, METRICS_REQUEST } from './http/metrics.js';
import { loadTls } from './http/tls.js';
import { resolveAdminToken } from './runtime.js';
import { migrate } from './store/migrate.js';
import { openConfiguredDb } from './store/open.js';
import { ensureCursorKey } from './store/service-info.js';

/**
 * `WORKERS=N`: this process (the primary) prepares what every worker would otherwise race to do on
 * a first start, then runs N `forecourt serve` workers that share the port (node:cluster hands
 * each new connection to the next worker). Each worker is a whole instance, as several instances
 * behind a load balancer are (docs/operations.md: rate limits in Redis, access changes heard by
 * all, webhooks leased); the primary only watches them, answers /metrics for all of them, and
 * stops them together.
 */
export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  await prepare(config, logger);
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== METRICS_REQUEST) return;
    // The asking worker may have exited meanwhile: a send to it would emit an 'error' nobody
    // hears and end the primary (and with it every worker). Its request is gone with it.
    const answer = (body: { text: string } | { error: string }) => {
      if (worker.isConnected()) worker.send({ type: METRICS_ANSWER, id: message.id, ...body }, () => {});
    };
    aggregator.clusterMetrics().then(
      (text) => answer({ text }),
      (error: unknown) => answer({ error: String(error) }),
    );
  });

  let stopping = false;
  const exits: number[] = [];
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    const now = Date.now();
    exits.push(now);
    while (exits[0]! < now - 60_000) exits.shift();
    if (exits.length > 5) {
      logger.fatal(
        { pid: worker.process.pid, code, signal },
        'worker processes keep exiting (6 in a minute): stopping',
      );
      stop('crash loop', 1);
      return;
    }
    logger.error(
      { pid: worker.process.pid, code, signal },
      'a worker process exited: starting another in 1 s',
    );
    setTimeout(() => {
      if (!stopping) cluster.fork();
    }, 1000);
  });

  const stop = (reason: string, exitCode: number) => {
    if (stopping) {
      logger.warn({ reason }, 'second signal: stopping the workers now');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    logger.info({ reason }, 'stopping the worker processes: each finishes its in-flight requests');
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    const timer = setTimeout(() => {
      logger.error('workers did not stop in time: exiting');
      for (const worker of workers) worker.process.kill('SIGKILL');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + 2_000);
    timer.unref();
    let left = workers.length;
    if (left === 0) process.exit(exitCode);
    for (const worker of workers) {
      worker.once('exit', () => {
        if (--left === 0) {
          logger.info('stopped');
          process.exit(exitCode);
        }
      });
      worker.process.kill('SIGTERM');
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM', 0));
  process.on('SIGINT', () => stop('SIGINT', 0));

  for (let i = 0; i < config.WORKERS; i++) cluster.fork();
  logger.info({ workers: config.WORKERS }, `started ${config.WORKERS} worker processes`);
}

/** Migrations, the cursor key, the TLS certificate and the admin token: once, before any worker. */
async function prepare(config: Config, logger: Logger): Promise<void> {
  const db = await openConfiguredDb(config);
  try {
    const applied = await migrate(db);
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    await ensureCursorKey(db);
  } finally {
    await db.close();
  }
  await loadTls({ certFile: config.TLS_CERT_FILE, keyFile: config.TLS_KEY_FILE, dataDir: config.DATA_DIR });
  resolveAdminToken(config, logger);
}

/**
 * In a worker: the primary coordinates stopping. A terminal's Ctrl+C reaches every process of the
 * group, so SIGINT is left to the primary (which sends SIGTERM); a worker whose primary is gone
 * stops as if told to.
 */
export function joinCluster(registry: Registry, stop: (signal: string) => void): void {
  // Answers the primary's requests for this worker's metrics (prom-client's cluster protocol).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => {});
  process.on('disconnect', () => stop('primary gone'));
}
