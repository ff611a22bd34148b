import type { Config } from './config.js';
import { cursorCodec } from './domain/cursor.js';
import { listingBodySchema } from './domain/listing-input.js';
import type { Db } from './store/db.js';
import { dealerStore } from './store/dealers.js';
import { listingReadStore } from './store/listings-read.js';
import { listingWriteStore } from './store/listings-write.js';
import { locationStatsStore } from './store/location-stats.js';
import { partnerStore } from './store/partners.js';

/**
 * Everything a request handler may use, built once at start from the config and the database.
 * Tests build the very same object on a real database.
 */
export function createServices(
  config: Config,
  db: Db,
  options: { adminToken: string; publicOrigin: string; cursorKey: string },
) {
  const listingBaseUrl = (config.PUBLIC_LISTING_BASE_URL ?? `${options.publicOrigin}/listings`).replace(
    /\/+$/,
    '',
  );
  return {
    config,
    db,
    adminToken: options.adminToken,
    listingBaseUrl,
    now: () => new Date(),
    cursors: cursorCodec(options.cursorKey),
    /** How far behind the clock sync cursors stay: no open write transaction can land before it. */
    horizonMs: config.WRITE_TX_TIMEOUT_MS * 2,
    dealers: dealerStore(db),
    partners: partnerStore(db),
    listings: listingReadStore(db, listingBaseUrl),
    listingWrites: listingWriteStore(db),
    listingSchema: listingBodySchema({ historyReportHosts: config.HISTORY_REPORT_HOSTS }),
    locationStats: locationStatsStore(db),
  };
}

export type Services = ReturnType<typeof createServices>;
