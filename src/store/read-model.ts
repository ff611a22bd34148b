import type { Queryable } from './db.js';
import { DEALER_JSON, listingBodySql, listingTailSql } from './listings/json.js';

/**
 * The read model's check (migration 011): the JSON text kept with each listing and each dealer,
 * compared with the same text built fresh from the row's columns now (listings/json.ts), set-based
 * in SQL, a batch of rows at a time in id order so that no statement runs long on a big table.
 * The store's writes and the triggers keep the text on every write, so drift means something went
 * around them (a trigger disabled, a row restored from elsewhere, a statement that set the text
 * wrong, a builder changed without its migration).
 */
export interface ReadModelDrift {
  /** Rows compared. */
  listings: number;
  dealers: number;
  /** Ids whose stored text differed (all of them: a healthy database has none). */
  driftedListings: string[];
  driftedDealers: string[];
  /** With repair: ids rewritten whose stored text still differs (the database's builder itself disagrees). */
  unrepaired: string[];
}

const BATCH = 5000;

export function readModelStore(db: Queryable) {
  const listingDrift = `l.read_json IS DISTINCT FROM ${listingBodySql()}
    OR l.read_json_tail IS DISTINCT FROM ${listingTailSql()}`;
  const dealerDrift = `d.read_json IS DISTINCT FROM ${DEALER_JSON}`;
  const tables = {
    listings: {
      from: 'listings l',
      id: 'l.id',
      drift: listingDrift,
      // The fresh text written as it is: a changed text is the writer's, which the trigger leaves
      // alone, so this stands even if the trigger were missing.
      repair: `UPDATE listings l SET read_json = ${listingBodySql()}, read_json_tail = ${listingTailSql()}
               WHERE l.id = ANY($1::uuid[])`,
    },
    dealers: {
      from: 'dealer_profiles d LEFT JOIN dealer_profiles p ON p.id = d.parent_id',
      id: 'd.id',
      drift: dealerDrift,
      repair: `UPDATE dealer_profiles d SET read_json = ${DEALER_JSON}
               FROM dealer_profiles d2 LEFT JOIN dealer_profiles p ON p.id = d2.parent_id
               WHERE d2.id = d.id AND d.id = ANY($1::uuid[])`,
    },
  };

  /** The drifted ids among rows after `after` (one batch), and where the batch ended. */
  async function batch(table: keyof typeof tables, after: string | null, ids: readonly string[] | null) {
    const t = tables[table];
    const rows = await db.query<{ last: string | null; n: number; drifted: string[] }>(
      `CheckReadModel:${table}`,
      `WITH b AS (
         SELECT ${t.id} AS id, (${t.drift}) AS drifted FROM ${t.from}
         WHERE ($1::uuid IS NULL OR ${t.id} > $1::uuid) AND ($3::uuid[] IS NULL OR ${t.id} = ANY($3::uuid[]))
         ORDER BY ${t.id} LIMIT $2
       )
       SELECT (SELECT id::text FROM b ORDER BY id DESC LIMIT 1) AS last, (SELECT count(*)::int FROM b) AS n,
              coalesce((SELECT array_agg(id::text ORDER BY id) FROM b WHERE drifted), '{}') AS drifted`,
      [after, BATCH, ids],
    );
    return rows[0]!;
  }

  async function scan(table: keyof typeof tables, repair: boolean, drift: ReadModelDrift) {
    let after: string | null = null;
    for (;;) {
      const b = await batch(table, after, null);
      if (b.n === 0) return;
      drift[table] += Number(b.n);
      if (b.drifted.length) {
        (table === 'listings' ? drift.driftedListings : drift.driftedDealers).push(...b.drifted);
        if (repair) {
          await db.query(`RepairReadModel:${table}`, tables[table].repair, [b.drifted]);
          drift.unrepaired.push(...(await batch(table, null, b.drifted)).drifted);
        }
      }
      after = b.last;
    }
  }

  return {
    /** Compares every listing's and dealer's stored text with a fresh one; with `repair`, rewrites those that differ. */
    async check(options: { repair?: boolean } = {}): Promise<ReadModelDrift> {
      const drift: ReadModelDrift = {
        listings: 0,
        dealers: 0,
        driftedListings: [],
        driftedDealers: [],
        unrepaired: [],
      };
      // Dealers first: nothing of a listing's text depends on its dealer's, but a reader splices both.
      await scan('dealers', options.repair ?? false, drift);
      await scan('listings', options.repair ?? false, drift);
      return drift;
    },
  };
}

export type ReadModelStore = ReturnType<typeof readModelStore>;
