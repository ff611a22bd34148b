import cluster from 'node:cluster';
import { joinCluster, runPrimary } from './cluster.js';
import { parseConfig } from './config.js';
import { createLogger } from './log.js';
import { start } from './runtime.js';

/**
 * `forecourt serve`: start from the environment, stop cleanly on SIGTERM/SIGINT. A second
 * signal, or a shutdown that takes longer than SHUTDOWN_TIMEOUT_MS, exits at once.
 */
export async function serve(env: Record<string, string | undefined>): Promise<void> {
  const config = parseConfig(env);
  const logger = createLogger(config);
  if (config.WORKERS > 1 && cluster.isPrimary) return runPrimary(config, logger);
  const running = await start(config, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out: exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    running.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  if (cluster.isWorker) {
    joinCluster(running.app.metrics.registry, stop);
    return;
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
