import type { Config } from './config.js';
import { partnerAuthentication } from './domain/authentication.js';
import { cursorCodec } from './domain/cursor.js';
import { dealerAdmin } from './domain/dealers.js';
import { listingBodySchema } from './domain/listing-input.js';
import { listingReads } from './domain/listing-query.js';
import { listingWrites } from './domain/listing-writes/index.js';
import { locationReads } from './domain/locations.js';
import { partnerAdmin } from './domain/partners.js';
import { auditStore } from './store/audit.js';
import type { Db } from './store/db.js';
import { dealerStore } from './store/dealers.js';
import { listingReadStore } from './store/listings-read.js';
import { listingWriteStore } from './store/listings-write.js';
import { locationStatsStore } from './store/location-stats.js';
import { partnerStore } from './store/partners.js';
import { syncHorizonStore } from './store/sync-horizon.js';

/**
 * The composition root: every use case built once, over exactly the stores and settings it
 * needs. Only entry points import this (runtime.ts, the benchmarks); everything else receives
 * the narrow piece it uses, so its imports show its real dependencies.
 */
export function compose(
  config: Config,
  db: Db,
  options: {
    cursorKey: string;
    publicOrigin: string;
    /** Where read-only partner queries go (a replica); the primary when unset. */
    readDb?: Db;
  },
) {
  const readDb = options.readDb ?? db;
  const listingBaseUrl = (config.PUBLIC_LISTING_BASE_URL ?? `${options.publicOrigin}/listings`).replace(
    /\/+$/,
    '',
  );
  // Writes must not commit behind a cursor: twice their bound is the slack the horizon keeps.
  const settleMs = config.WRITE_TX_TIMEOUT_MS * 2;
  const dealers = dealerStore(db);
  const partners = partnerStore(db);
  const audit = auditStore(db);
  const cursors = cursorCodec(options.cursorKey);
  /** Up to where sync cursors may pass: no write still open can commit a listing before it. */
  const syncHorizon = syncHorizonStore(readDb, db, settleMs);
  return {
    listings: listingReads({
      dealers,
      listings: listingReadStore(readDb),
      cursors,
      syncHorizon,
    }),
    locations: locationReads({
      dealers,
      locationStats: locationStatsStore(readDb, db, settleMs),
      cursors,
      now: () => new Date(),
    }),
    writes: listingWrites({
      db,
      dealers,
      store: listingWriteStore(db),
      syncHorizon,
      schema: listingBodySchema({ historyReportHosts: config.HISTORY_REPORT_HOSTS }),
      writeTimeoutMs: config.WRITE_TX_TIMEOUT_MS,
    }),
    authentication: partnerAuthentication({ partners, dealers, audit }),
    dealers: dealerAdmin({ db, dealers, audit }),
    partners: partnerAdmin({ db, partners, dealers, audit }),
    auditLog: { list: audit.list.bind(audit) },
    listingBaseUrl,
    /** For the replica's horizon publisher (runtime.ts). */
    syncHorizon,
  };
}

export type UseCases = ReturnType<typeof compose>;
