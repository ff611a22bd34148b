import type { Queryable } from '../store/db.js';
import type { TestDataStore } from '../store/test-data.js';
import { problem } from './errors.js';
import { messages } from './messages.js';

/** How many test listings a partner may hold (docs/test-mode.md). */
export const TEST_LISTING_LIMIT = 10_000;
/** A partner's test data it has not touched (written, or used in a test request) for this long is deleted (docs/test-mode.md). */
export const TEST_DATA_EXPIRY_DAYS = 30;

/**
 * Refuses a test write that would take the partner past TEST_LISTING_LIMIT. Inside the write's
 * transaction, after the partner's test-write lock: two batches racing cannot both pass.
 */
export async function assertTestRoom(
  store: Pick<TestDataStore, 'lockAndCount'>,
  partnerId: string,
  adding: number,
  tx: Queryable,
): Promise<void> {
  const held = await store.lockAndCount(partnerId, tx);
  if (held + adding > TEST_LISTING_LIMIT) {
    throw problem('TEST_LIMIT_REACHED', messages.testLimitReached(TEST_LISTING_LIMIT, held, adding));
  }
}

interface TestDataDeps {
  store: Pick<TestDataStore, 'wipe'>;
}

/** A partner's test data as a whole: what DELETE /test-data does (docs/test-mode.md). */
export function testData(deps: TestDataDeps) {
  return {
    /** Deletes the partner's test listings and their events; refused to a live secret. */
    async wipe(partner: { id: string; test: boolean }): Promise<{ deleted: number }> {
      if (!partner.test) throw problem('TEST_MODE_ONLY', messages.testModeOnly());
      return { deleted: await deps.store.wipe(partner.id) };
    },
  };
}

export type TestData = ReturnType<typeof testData>;
