import { randomBytes } from 'node:crypto';
import { type Logger, pino } from 'pino';
import type { Config } from './config.js';
import { accessCache } from './domain/access-cache.js';
import { partnerAuthentication } from './domain/authentication.js';
import { cursorCodec } from './domain/cursor.js';
import { dealerLookup } from './domain/dealer-lookup.js';
import { dealerAdmin } from './domain/dealers.js';
import { eventRounds } from './domain/events/rounds.js';
import { imageHealth } from './domain/images/health.js';
import { listingBodySchema } from './domain/listings/input.js';
import { listingInspection } from './domain/listings/inspection.js';
import { listingReads } from './domain/listings/reads.js';
import { listingWrites } from './domain/listings/writes/index.js';
import { locationReads } from './domain/locations.js';
import { operatorAccess } from './domain/operators.js';
import { partnerAdmin } from './domain/partners.js';
import { requestRecordReads } from './domain/request-records/reads.js';
import { requestRecorder } from './domain/request-records/recorder.js';
import { testData } from './domain/test-data.js';
import { webhookAdmin } from './domain/webhooks/endpoints.js';
import { type RoundDeps, webhookRounds } from './domain/webhooks/round.js';
import { webhookPoster } from './outbound/webhook-post.js';
import { auditStore } from './store/audit.js';
import type { Db } from './store/db.js';
import { dealerStore } from './store/dealers.js';
import { eventStore } from './store/events.js';
import { imageHealthStore } from './store/image-health.js';
import { listingInspectionStore } from './store/listing-inspection.js';
import { listingJsonProjection } from './store/listings/json.js';
import { listingReadStore } from './store/listings/reads.js';
import { listingWriteStore } from './store/listings/writes.js';
import { locationStatsStore } from './store/location-stats.js';
import { operatorStore } from './store/operators.js';
import { partnerStore } from './store/partners.js';
import { requestRecordStore } from './store/request-records.js';
import { syncHorizonStore } from './store/sync-horizon.js';
import { testDataStore } from './store/test-data.js';
import { webhookEventStreamStore } from './store/webhooks/event-streams.js';
import { webhookStore } from './store/webhooks/index.js';

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
    /**
     * The webhook dispatcher's connections to the primary (a pool of its own, so deliveries never
     * make a partner's request wait for a connection); `db` when unset.
     */
    deliveryDb?: Db;
    /** The bootstrap operator token; a random one (usable by nobody) when unset. */
    adminToken?: string;
    /** Where background work (the request recorder) logs; silent when unset. */
    logger?: Logger;
  },
) {
  const readDb = options.readDb ?? db;
  const deliveryDb = options.deliveryDb ?? db;
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
  const webhooks = webhookStore(db);
  const post = webhookPoster({
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  // Webhooks read on the primary: a delivery's horizon and its page must come from one database.
  const primaryHorizon = readDb === db ? syncHorizon : syncHorizonStore(db, db, settleMs);
  const records = requestRecordStore(db);
  const recorder = requestRecorder({
    store: records,
    logger: options.logger ?? pino({ enabled: false }),
    options: {
      retentionDays: config.REQUEST_RECORDS_RETENTION_DAYS,
      failuresPerMinute: config.REQUEST_RECORDS_PER_MINUTE,
      maxBuffered: 20_000,
    },
  });
  const access = accessCache();
  // The dealers partners' lists and writes name, kept with their access (forgotten with it).
  const named = dealerLookup(dealers, access);
  // A listing as GET /listings/{id} sends it: its stored read-model JSON (store/listings/json.ts).
  const listingJson = listingJsonProjection(listingBaseUrl);
  return {
    listings: listingReads({
      dealers: { ...named, subtree: (ids) => dealers.subtree(ids) },
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
      dealers: named,
      store: listingWriteStore(db),
      testData: testDataStore(db),
      syncHorizon,
      schema: listingBodySchema({ historyReportHosts: config.HISTORY_REPORT_HOSTS }),
      // The listing as GET /listings/{id} shows it, read in the write's transaction: its ETag.
      view: listingJson,
      writeTimeoutMs: config.WRITE_TX_TIMEOUT_MS,
    }),
    authentication: partnerAuthentication({ partners, dealers, audit, cache: access }),
    /** Partners' access kept between requests; runtime.ts keeps it told of changes (LISTEN). */
    accessCache: access,
    /** A change to partners, secrets or dealers was committed by this instance: forget at once. */
    accessChanged: () => access.forget(),
    dealers: dealerAdmin({ db, dealers, audit, partners }),
    partners: partnerAdmin({ db, partners, dealers, audit }),
    operators: operatorAccess({
      db,
      store: operatorStore(db),
      audit,
      adminToken: options.adminToken ?? randomBytes(32).toString('hex'),
    }),
    auditLog: { list: audit.list.bind(audit) },
    imageHealth: imageHealth({ store: imageHealthStore(db) }),
    listingInspections: listingInspection({ store: listingInspectionStore(db, listingJson), partners }),
    /** Keeps failed requests and per-partner usage (written by background/request-records.ts). */
    requestRecorder: recorder,
    testData: testData({ store: testDataStore(db) }),
    requestRecords: requestRecordReads({ store: records, flush: recorder.flush, cursors }),
    webhooks: webhookAdmin({
      db,
      store: webhooks,
      dealers,
      audit,
      syncHorizon: primaryHorizon,
      cursors,
      post,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
      allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    }),
    /** The delivery rounds of this instance (background/webhooks.ts runs them). */
    webhookRounds: (logger: Logger, hooks: Pick<RoundDeps, 'observe' | 'saturated' | 'roundFailed'> = {}) =>
      webhookRounds({
        ...hooks,
        db: deliveryDb,
        store: webhookStore(deliveryDb),
        listings: listingReadStore(deliveryDb),
        syncHorizon: deliveryDb === db ? primaryHorizon : syncHorizonStore(deliveryDb, deliveryDb, settleMs),
        partners: partnerStore(deliveryDb),
        dealers: dealerStore(deliveryDb),
        audit: auditStore(deliveryDb),
        cursors,
        // The text GET /listings/{id} sends, to the byte.
        listingJson,
        post,
        logger,
        // Twice the timeout and some: a lease lapses only when its holder is gone.
        leaseMs: config.WEBHOOK_TIMEOUT_MS * 2 + 5_000,
      }),
    /** The delivery rounds of the events outbox (background/webhook-events.ts runs them). */
    webhookEventRounds: (logger: Logger, hooks: Pick<RoundDeps, 'observe' | 'saturated'> = {}) =>
      eventRounds({
        ...hooks,
        db: deliveryDb,
        endpoints: webhookStore(deliveryDb),
        streams: webhookEventStreamStore(deliveryDb),
        events: eventStore(deliveryDb),
        syncHorizon: deliveryDb === db ? primaryHorizon : syncHorizonStore(deliveryDb, deliveryDb, settleMs),
        partners: partnerStore(deliveryDb),
        dealers: dealerStore(deliveryDb),
        audit: auditStore(deliveryDb),
        post,
        logger,
        leaseMs: config.WEBHOOK_TIMEOUT_MS * 2 + 5_000,
      }),
    /** A listing as every answer shows it (pages, single reads, ETags, webhook deliveries). */
    listingJson,
    /** For the replica's horizon publisher (background/sync-horizon.ts). */
    syncHorizon,
  };
}

export type UseCases = ReturnType<typeof compose>;
