import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { ACCESS_CHANNEL, type AccessCache } from '../domain/access-cache.js';
import type { EventRounds } from '../domain/events/rounds.js';
import type { RequestRecorder } from '../domain/request-records/recorder.js';
import type { WebhookRounds } from '../domain/webhooks/round.js';
import type { Db } from '../store/db.js';
import type { SyncHorizonStore } from '../store/sync-horizon.js';
import { testDataStore } from '../store/test-data.js';
import { embeddedVacuumLoop } from './embedded-vacuum.js';
import { configuredImageChecks, type ImageCheckConfig } from './image-checks.js';
import { type ListenHandlers, listenLoop } from './listen.js';
import type { Loop, LoopStats } from './loop.js';
import { requestRecordsLoop } from './request-records.js';
import { syncHorizonLoop } from './sync-horizon.js';
import { testDataExpiryLoop } from './test-data-expiry.js';
import { webhookEventsLoop } from './webhook-events.js';
import { webhookLogLoop, webhooksLoop } from './webhooks.js';

/** What the loops of an instance work on. */
export interface InstanceWork {
  /** The image checker's settings come with the parsed configuration (absent: no checker). */
  config: Pick<Config, 'EMBEDDED_VACUUM_INTERVAL_MS' | 'WEBHOOK_CONCURRENCY'> & Partial<ImageCheckConfig>;
  /** The primary database. */
  db: Db;
  /** Whether reads go to a replica (which needs the primary's sync horizon published). */
  replica: boolean;
  accessCache: AccessCache;
  requestRecorder: Pick<RequestRecorder, 'pass' | 'flush'>;
  syncHorizon: Pick<SyncHorizonStore, 'publish'>;
  /** The delivery rounds (compose.ts), and whether partners' requests saturate the instance. */
  webhooks: { rounds: WebhookRounds; events?: EventRounds | undefined; saturated: () => boolean };
  /** Each image check that ended, for the metrics. */
  imageChecks?: { observe: (state: string, durationMs: number) => void } | undefined;
  logger: Logger;
}

/**
 * Every background loop an instance runs (docs/operations.md, "Background loops"), in the order
 * they start; they stop in the reverse order, so the webhook rounds finish and the last request
 * records are written before the connection that hears changes closes.
 */
export function instanceLoops(work: InstanceWork) {
  const { config, db, logger } = work;
  const listen = listenLoop(db, ACCESS_CHANNEL, heardChanges(work.accessCache, logger));
  const loops: Loop[] = [
    listen,
    ...(work.replica ? [syncHorizonLoop(work.syncHorizon, logger)] : []),
    requestRecordsLoop(work.requestRecorder),
    testDataExpiryLoop(testDataStore(db), logger.child({ component: 'test-data' })),
    ...(db.kind === 'pglite' && config.EMBEDDED_VACUUM_INTERVAL_MS > 0
      ? [embeddedVacuumLoop(db, config.EMBEDDED_VACUUM_INTERVAL_MS, logger.child({ component: 'database' }))]
      : []),
    ...(config.WEBHOOK_CONCURRENCY > 0
      ? [
          webhooksLoop(work.webhooks.rounds, {
            concurrency: config.WEBHOOK_CONCURRENCY,
            saturated: work.webhooks.saturated,
            logger: logger.child({ component: 'webhooks' }),
          }),
          webhookLogLoop(work.webhooks.rounds, logger.child({ component: 'webhooks' })),
          ...(work.webhooks.events
            ? [
                webhookEventsLoop(work.webhooks.events, {
                  concurrency: config.WEBHOOK_CONCURRENCY,
                  saturated: work.webhooks.saturated,
                  logger: logger.child({ component: 'webhooks' }),
                }),
              ]
            : []),
        ]
      : []),
    // Image checks (docs/images.md): they make way while partners' requests saturate the instance.
    ...(config.IMAGE_CHECK_CONCURRENCY
      ? [
          configuredImageChecks(config as ImageCheckConfig, db, {
            saturated: work.webhooks.saturated,
            logger: logger.child({ component: 'images' }),
            observe: (_url, check, ms) => work.imageChecks?.observe(check.state, ms),
          }),
        ]
      : []),
  ];
  return {
    loops,
    /**
     * Starts every loop. Partners' access is kept only while changes are heard: the first attempt
     * to listen is over before this resolves, so the first requests find the cache as it will be.
     */
    async start(): Promise<void> {
      for (const running of loops) {
        const first = running.start();
        if (running === listen) await first;
      }
    },
    /** Stops every loop in the reverse order, each after its pass (and its work) under way. */
    async stop(): Promise<void> {
      for (const running of [...loops].reverse()) await running.stop();
    },
    stats: (): LoopStats[] => loops.map((running) => running.stats()),
  };
}

export type InstanceLoops = ReturnType<typeof instanceLoops>;

/**
 * Partners' access is kept by the instance while it is proven to hear every change
 * (domain/access-cache.ts): a notification forgets it, and so does a listener that may miss some.
 */
function heardChanges(cache: AccessCache, logger: Logger): ListenHandlers {
  let heard = true;
  return {
    onNotify: () => cache.forget(),
    onLive(live, detail) {
      cache.setLive(live);
      if (!live && heard)
        logger.warn(
          { detail },
          'not hearing changes to partners: access is read per request (not cached) until they are heard',
        );
      if (live && !heard) logger.info({ detail }, 'hearing changes to partners again');
      heard = live;
    },
  };
}
