import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import {
  checkFetcher,
  type ImageChecker,
  type ImageCheckerDeps,
  imageChecker,
} from '../domain/images/checker.js';
import { HostLimits } from '../domain/images/host-limits.js';
import { imageCheckChanged } from '../domain/images/results.js';
import type { Db } from '../store/db.js';
import { imageCheckStore } from '../store/image-checks.js';
import { type Loop, type LoopTuning, loop, SATURATED } from './loop.js';

/** How often an instance looks for due images. */
export const IMAGE_CHECK_POLL_MS = 1000;
/** While claiming fails (a database outage): polls spaced out, doubling up to this. */
const MAX_OUTAGE_POLL_MS = 30_000;

/**
 * Checks images (docs/images.md): a pass claims as many due URLs as there are free slots
 * (IMAGE_CHECK_CONCURRENCY) and starts their checks, which run beside the passes; a check that
 * ends frees a slot and wakes the loop. While partners' requests saturate the instance
 * (`saturated`, http/pressure.ts) it starts none: checks wait, partners' writes do not. Stopping
 * abandons the checks under way (their URLs are due again at once, for this or another instance).
 */
export function imageChecksLoop(
  checker: ImageChecker,
  options: {
    concurrency: number;
    saturated?: (() => boolean) | undefined;
    logger: Logger;
    /** After the last check: the fetcher's kept-alive connections closed. */
    close?: () => void;
  },
  tuning: LoopTuning = {},
): Loop {
  const saturated = () => options.saturated?.() ?? false;
  const checking: Loop = loop({
    name: 'image-checks',
    everyMs: IMAGE_CHECK_POLL_MS,
    backoff: { maxMs: MAX_OUTAGE_POLL_MS },
    async pass() {
      if (saturated()) return;
      const free = options.concurrency - checker.inFlight();
      if (free <= 0) return;
      const claimed = await checker.startDue(free, () => {
        if (!saturated()) void checking.wake();
      });
      // A full claim: more may be due.
      return claimed === free ? SATURATED : undefined;
    },
    failed(error, { inARow }) {
      if (inARow === 1) options.logger.warn({ err: error }, 'image checker could not claim images');
    },
    recovered: () => options.logger.info('image checker claims images again'),
    afterLast: async () => {
      checker.abandon();
      await checker.settle();
      options.close?.();
    },
    ...tuning,
  });
  return checking;
}

export type ImageCheckConfig = Pick<
  Config,
  | 'IMAGE_CHECK_CONCURRENCY'
  | 'IMAGE_CHECK_ALLOW_PRIVATE'
  | 'IMAGE_CHECK_ALLOW_LOOPBACK'
  | 'IMAGE_CHECK_TIMEOUT_MS'
  | 'WRITE_TX_TIMEOUT_MS'
>;

/** The image checker of an instance as the configuration sets it, on the primary database. */
export function configuredImageChecks(
  config: ImageCheckConfig,
  db: Db,
  options: {
    saturated?: (() => boolean) | undefined;
    logger: Logger;
    observe?: ImageCheckerDeps['observe'];
    changed?: ImageCheckerDeps['changed'];
  },
  tuning: LoopTuning = {},
): Loop {
  const fetcher = checkFetcher({
    allowPrivate: config.IMAGE_CHECK_ALLOW_PRIVATE,
    allowLoopback: config.IMAGE_CHECK_ALLOW_LOOPBACK,
    timeoutMs: config.IMAGE_CHECK_TIMEOUT_MS,
  });
  const checker = imageChecker({
    db,
    store: imageCheckStore(db),
    fetcher,
    hosts: new HostLimits(),
    instance: `${hostname()}:${process.pid}`,
    writeTxMs: config.WRITE_TX_TIMEOUT_MS,
    observe: options.observe,
    changed: options.changed ?? imageCheckChanged,
    logger: options.logger,
  });
  return imageChecksLoop(
    checker,
    {
      concurrency: config.IMAGE_CHECK_CONCURRENCY,
      saturated: options.saturated,
      logger: options.logger,
      close: () => fetcher.close(),
    },
    tuning,
  );
}
