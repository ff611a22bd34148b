import type { Logger } from 'pino';
import { TEST_DATA_EXPIRY_DAYS } from '../domain/test-data.js';
import type { TestDataStore } from '../store/test-data.js';
import { type Loop, type LoopTuning, loop } from './loop.js';

/** How often test data past its expiry is looked for: it expires by the day, so hourly is plenty. */
const EVERY_MS = 3_600_000;

/**
 * Deletes the test data of partners who left it untouched for TEST_DATA_EXPIRY_DAYS days
 * (docs/test-mode.md): at start, then every hour. Each partner whose data went is logged.
 */
export function testDataExpiryLoop(
  store: Pick<TestDataStore, 'expire'>,
  logger: Logger,
  tuning: LoopTuning = {},
): Loop {
  return loop({
    name: 'test-data-expiry',
    everyMs: EVERY_MS,
    backoff: { firstMs: 60_000, maxMs: EVERY_MS },
    async pass() {
      for (const { partnerId, deleted } of await store.expire(TEST_DATA_EXPIRY_DAYS)) {
        logger.info({ partnerId, deleted }, 'test data expired');
      }
    },
    failed(error, { inARow }) {
      if (inARow === 1) logger.warn({ err: error }, 'could not expire test data');
    },
    ...tuning,
  });
}
