import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { amcheck } from '@electric-sql/pglite/contrib/amcheck';
import type { Db, Queryable } from '../../src/store/db.js';
import { openDb } from '../../src/store/open.js';

/**
 * What must hold in the database after any crash, read with plain SQL and with index scans off
 * (so a broken index cannot hide a broken table): the trigger-kept counters equal the rows they
 * count, every listing's latest status-history row matches it, references are unique per partner,
 * no row points at nothing, and the table constraints still hold row by row.
 */
const INVARIANTS: { name: string; sql: string }[] = [
  {
    name: 'listing_counts equals count(*) per dealer and status',
    sql: `WITH actual AS (SELECT dealer_profile_id, status, count(*)::bigint AS n FROM listings GROUP BY 1, 2)
          SELECT coalesce(a.dealer_profile_id, c.dealer_profile_id) AS dealer,
                 coalesce(a.status, c.status) AS status, coalesce(a.n, 0) AS rows, coalesce(c.n, 0) AS counted
          FROM actual a FULL JOIN listing_counts c
            ON c.dealer_profile_id = a.dealer_profile_id AND c.status = a.status
          WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)`,
  },
  {
    name: "each listing's latest status-history row has its status and dealer",
    sql: `SELECT l.id, l.status, l.dealer_profile_id, h.status AS history_status,
                 h.dealer_profile_id AS history_dealer
          FROM listings l
          LEFT JOIN (SELECT DISTINCT ON (listing_id) listing_id, status, dealer_profile_id
                     FROM listing_status_history ORDER BY listing_id, id DESC) h ON h.listing_id = l.id
          WHERE h.status IS DISTINCT FROM l.status OR h.dealer_profile_id IS DISTINCT FROM l.dealer_profile_id`,
  },
  {
    name: 'unique (partner, reference)',
    sql: `SELECT partner_id, external_reference, count(*) AS n FROM listings GROUP BY 1, 2 HAVING count(*) > 1`,
  },
  {
    name: 'unique listing id and slug',
    sql: `SELECT 'id' AS what, id::text AS value FROM listings GROUP BY id HAVING count(*) > 1
          UNION ALL SELECT 'slug', slug FROM listings GROUP BY slug HAVING count(*) > 1`,
  },
  {
    name: 'no orphan rows',
    sql: `SELECT 'listing without partner' AS what, l.id::text AS row FROM listings l
            WHERE NOT EXISTS (SELECT 1 FROM partners p WHERE p.id = l.partner_id)
          UNION ALL SELECT 'listing without dealer', l.id::text FROM listings l
            WHERE NOT EXISTS (SELECT 1 FROM dealer_profiles d WHERE d.id = l.dealer_profile_id)
          UNION ALL SELECT 'history without listing', h.id::text FROM listing_status_history h
            WHERE NOT EXISTS (SELECT 1 FROM listings l WHERE l.id = h.listing_id)
          UNION ALL SELECT 'history without dealer', h.id::text FROM listing_status_history h
            WHERE NOT EXISTS (SELECT 1 FROM dealer_profiles d WHERE d.id = h.dealer_profile_id)
          UNION ALL SELECT 'counter without dealer', c.dealer_profile_id::text FROM listing_counts c
            WHERE c.n <> 0 AND NOT EXISTS (SELECT 1 FROM dealer_profiles d WHERE d.id = c.dealer_profile_id)
          UNION ALL SELECT 'secret without partner', s.partner_id::text FROM partner_secrets s
            WHERE NOT EXISTS (SELECT 1 FROM partners p WHERE p.id = s.partner_id)
          UNION ALL SELECT 'dealer without parent', d.id::text FROM dealer_profiles d
            WHERE d.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM dealer_profiles p WHERE p.id = d.parent_id)`,
  },
  {
    name: 'row constraints (status, soldAt iff sold, price while listed, non-negative counters)',
    sql: `SELECT id::text, status FROM listings
          WHERE status NOT IN ('active', 'pending', 'sold', 'draft')
             OR (status = 'sold') <> (sold_at IS NOT NULL)
             OR (status IN ('active', 'pending') AND price IS NULL)
          UNION ALL SELECT dealer_profile_id::text, status FROM listing_counts WHERE n < 0`,
  },
];

/** What the invariants alone report, before amcheck. */
type Invariants = Omit<CheckReport, 'indexesChecked' | 'tablesChecked'>;

export interface CheckReport {
  listings: number;
  historyRows: number;
  /** Indexes verified by amcheck (bt_index_check with heapallindexed); 0 when not run. */
  indexesChecked: number;
  tablesChecked: number;
  problems: string[];
}

async function invariants(db: Db): Promise<Invariants> {
  return db.transaction(async (tx) => {
    await tx.exec(
      'NoIndexScans',
      'SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off',
    );
    const problems: string[] = [];
    for (const { name, sql } of INVARIANTS) {
      const rows = await tx.query(name, sql);
      if (rows.length)
        problems.push(`${name}: ${rows.length} violations, e.g. ${JSON.stringify(rows.slice(0, 3))}`);
    }
    const [sizes] = await tx.query<{ listings: number; history: number }>(
      'Sizes',
      'SELECT (SELECT count(*) FROM listings) AS listings, (SELECT count(*) FROM listing_status_history) AS history',
    );
    return { listings: Number(sizes!.listings), historyRows: Number(sizes!.history), problems };
  });
}

/**
 * PostgreSQL's own verification (the amcheck extension): every B-tree index of our tables
 * against its table (heapallindexed: each heap tuple must be found in the index), and each table's
 * heap pages (verify_heapam), added to `report`.
 */
async function addAmcheck(q: Queryable, report: Invariants): Promise<CheckReport> {
  await q.exec('Amcheck', 'CREATE EXTENSION IF NOT EXISTS amcheck');
  const problems: string[] = [];
  const indexes = await q.query<{ name: string }>(
    'Indexes',
    `SELECT c.oid::regclass::text AS name FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
       JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE am.amname = 'btree' AND n.nspname = 'public' ORDER BY 1`,
  );
  for (const { name } of indexes) {
    try {
      await q.query('BtIndexCheck', 'SELECT bt_index_check($1::regclass, true)', [name]);
    } catch (error) {
      problems.push(`amcheck ${name}: ${(error as Error).message}`);
    }
  }
  const tables = await q.query<{ name: string }>(
    'Tables',
    `SELECT c.oid::regclass::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND n.nspname = 'public' ORDER BY 1`,
  );
  for (const { name } of tables) {
    try {
      const bad = await q.query('VerifyHeap', 'SELECT * FROM verify_heapam($1::regclass)', [name]);
      if (bad.length) problems.push(`verify_heapam ${name}: ${JSON.stringify(bad.slice(0, 3))}`);
    } catch (error) {
      problems.push(`verify_heapam ${name}: ${(error as Error).message}`);
    }
  }
  return {
    ...report,
    indexesChecked: indexes.length,
    tablesChecked: tables.length,
    problems: [...report.problems, ...problems],
  };
}

const dbOptions = (dataDir: string, databaseUrl?: string) => ({
  databaseUrl,
  dataDir,
  statementTimeoutMs: 60_000,
  connectTimeoutMs: 10_000,
  poolSize: 1,
});

/**
 * The embedded database, after the service was killed: opened with the project's own adapter (which
 * takes over the dead process's lock and lets PGlite recover, as the next `serve` would), then once
 * more with the amcheck extension loaded (the adapter loads no extensions).
 */
export async function checkPglite(dataDir: string, withAmcheck: boolean): Promise<CheckReport> {
  const db = await openDb(dbOptions(dataDir));
  let report: Invariants;
  try {
    report = await invariants(db);
  } finally {
    await db.close();
  }
  if (!withAmcheck) return { ...report, indexesChecked: 0, tablesChecked: 0 };
  const pglite = await PGlite.create(path.resolve(dataDir, 'pglite'), { extensions: { amcheck } });
  try {
    const q: Queryable = {
      query: async (_name, sql, params = []) => (await pglite.query<any>(sql, params as unknown[])).rows,
      exec: async (_name, sql) => {
        await pglite.exec(sql);
      },
    };
    return await addAmcheck(q, report);
  } finally {
    await pglite.close();
  }
}

/**
 * A PostgreSQL database, through the project's adapter, and amcheck. amcheck ships with PostgreSQL
 * itself (contrib, in Debian's server package): a server without it is a problem to report, not a
 * check to skip in silence.
 */
export async function checkPostgres(url: string, dataDir: string): Promise<CheckReport> {
  const db = await openDb(dbOptions(dataDir, url));
  try {
    const report = await invariants(db);
    const [available] = await db.query<{ n: number }>(
      'HasAmcheck',
      `SELECT count(*) AS n FROM pg_available_extensions WHERE name = 'amcheck'`,
    );
    if (!Number(available!.n)) {
      return {
        ...report,
        indexesChecked: 0,
        tablesChecked: 0,
        problems: [...report.problems, 'amcheck is not available on this server'],
      };
    }
    return await addAmcheck(db, report);
  } finally {
    await db.close();
  }
}
