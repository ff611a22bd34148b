import type { Logger } from 'pino';
import type { Config } from './config.js';
import { cursorCodec } from './domain/cursor.js';
import { listingBodySchema } from './domain/listing-input.js';
import { createMetrics } from './http/metrics.js';
import { rateLimits } from './http/rate-limit.js';
import { memoryCounter } from './ratelimit/counter.js';
import { redisCounter } from './ratelimit/redis-counter.js';
import { auditStore } from './store/audit.js';
import type { Db } from './store/db.js';
import { dealerStore } from './store/dealers.js';
import { listingReadStore } from './store/listings-read.js';
import { listingWriteStore } from './store/listings-write.js';
import { locationStatsStore } from './store/location-stats.js';
import { partnerStore } from './store/partners.js';
import { syncHorizonStore } from './store/sync-horizon.js';

/**
 * Everything a request handler may use, built once at start from the config and the database.
 * Tests build the very same object on a real database.
 */
export function createServices(
  config: Config,
  db: Db,
  options: {
    adminToken: string;
    publicOrigin: string;
    cursorKey: string;
    logger: Logger;
    /** Where read-only partner queries go (a replica); the primary when unset. */
    readDb?: Db;
  },
) {
  const readDb = options.readDb ?? db;
  const metrics = createMetrics(() => db.poolStats?.());
  const counter = config.REDIS_URL
    ? redisCounter({
        url: config.REDIS_URL,
        logger: options.logger,
        commandTimeoutMs: config.REDIS_TIMEOUT_MS,
        onFallback: () => metrics.rateLimitFallbacks.inc(),
      })
    : memoryCounter();
  const listingBaseUrl = (config.PUBLIC_LISTING_BASE_URL ?? `${options.publicOrigin}/listings`).replace(
    /\/+$/,
    '',
  );
  return {
    config,
    db,
    readDb,
    adminToken: options.adminToken,
    listingBaseUrl,
    now: () => new Date(),
    metrics,
    /** Rate-limit counts: closed with the service. */
    counter,
    rateLimits: rateLimits({
      counter,
      metrics,
      defaultPerMinute: config.RATE_LIMIT_PER_MINUTE,
      authFailuresPerMinute: config.AUTH_FAILURE_LIMIT_PER_MINUTE,
    }),
    cursors: cursorCodec(options.cursorKey),
    /** Up to where sync cursors may pass: no write still open can commit a listing before it. */
    syncHorizon: syncHorizonStore(readDb, db, config.WRITE_TX_TIMEOUT_MS * 2),
    audit: auditStore(db),
    dealers: dealerStore(db),
    partners: partnerStore(db),
    listings: listingReadStore(readDb, listingBaseUrl),
    listingWrites: listingWriteStore(db),
    listingSchema: listingBodySchema({ historyReportHosts: config.HISTORY_REPORT_HOSTS }),
    locationStats: locationStatsStore(readDb, db, config.WRITE_TX_TIMEOUT_MS * 2),
  };
}

export type Services = ReturnType<typeof createServices>;
