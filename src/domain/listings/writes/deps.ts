import type { Db, Projection } from '../../../store/db.js';
import type { ListingWriteStore } from '../../../store/listings/writes.js';
import type { SyncHorizonStore } from '../../../store/sync-horizon.js';
import type { TestDataStore } from '../../../store/test-data.js';
import type { DealerLookup } from '../../dealer-lookup.js';
import type { ListingBodySchema } from '../items.js';

/** What writing listings needs: the stores it touches and the bound on its transactions. */
export interface ListingWriteDeps {
  db: Pick<Db, 'transaction'>;
  /** The dealers items name, by id or location code. */
  dealers: DealerLookup;
  store: ListingWriteStore;
  /** A test write's size check (docs/test-mode.md). */
  testData: Pick<TestDataStore, 'lockAndCount'>;
  /** Told after each write, so that a walk starting after the answer sees a fresh horizon. */
  syncHorizon: Pick<SyncHorizonStore, 'forget'>;
  /** Validates a listing body (built with the service's settings: history report hosts). */
  schema: ListingBodySchema;
  /**
   * A listing as GET /listings/{id} shows it (the JSON the database builds, and its dealer): its
   * hash is the listing's ETag, read inside a write's transaction for If-Match and for the answer.
   */
  view: Projection<{ json: string; dealerId: string }>;
  /** Listing writes are bounded in time: sync cursors trust that nothing commits later (docs/sync.md). */
  writeTimeoutMs: number;
}
