/**
 * What statements cost the way the service sends them, by way of connecting: PostgreSQL directly
 * or through a pooler, in session mode (prepared list pages, the session's timeout) or in
 * transaction mode (nothing prepared by name; a statement outside a transaction carries its own
 * timeout: SET, the statement, RESET in one round trip), and what the alternative of a
 * transaction per statement (BEGIN + SET LOCAL, the statement, COMMIT) would cost.
 * One connection, requests one after another: the figures are round trips, the pooler's hop,
 * parsing and planning, not concurrency. docs/benchmarks.md, "Behind a connection pooler".
 *
 *   node --import tsx bench/pooler-statements.ts --direct postgres://root@127.0.0.1:5432/bench_100k \
 *     --transaction-pooler postgres://root@127.0.0.1:6432/bench_100k \
 *     --session-pooler postgres://root@127.0.0.1:6433/bench_100k [--dataset bench/.data/bench_100k.json]
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compose } from '../src/compose.js';
import { parseConfig } from '../src/config.js';
import type { Db, PoolMode } from '../src/store/db.js';
import { openDb } from '../src/store/open.js';
import { ensureCursorKey } from '../src/store/service-info.js';
import { recording, type Statement } from './lib/db-limit.js';
import { type Dataset, READS, requestWork, secretOf } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    direct: { type: 'string' },
    'transaction-pooler': { type: 'string' },
    'session-pooler': { type: 'string' },
    dataset: { type: 'string' },
    requests: { type: 'string', default: '2000' },
  },
});
const n = Number(values.requests);
const direct = values.direct;
if (!direct) throw new Error('--direct is required');
const open = (url: string, poolMode: PoolMode) =>
  openDb({
    databaseUrl: url,
    dataDir: os.tmpdir(),
    statementTimeoutMs: 10_000,
    connectTimeoutMs: 5000,
    poolSize: 1,
    poolMode,
  });

/** The statements of one list page once the partner's access is kept (as run.ts records them). */
async function pageStatements(scenario: string): Promise<Statement[]> {
  const datasetFile =
    values.dataset ??
    path.resolve(import.meta.dirname, '.data', `${new URL(direct!).pathname.slice(1)}.json`);
  const dataset = JSON.parse(readFileSync(datasetFile, 'utf8')) as Dataset;
  const recorder = recording(await open(direct!, 'session'));
  try {
    const config = parseConfig({ DATA_DIR: os.tmpdir(), DATABASE_URL: direct });
    const useCases = compose(config, recorder.db, {
      cursorKey: await ensureCursorKey(recorder.db),
      publicOrigin: 'https://localhost:8443',
    });
    useCases.accessCache.setLive(true);
    const s = READS.find((r) => r.name === scenario)!;
    await requestWork(useCases, secretOf(dataset, s.who), s.path);
    recorder.take();
    await requestWork(useCases, secretOf(dataset, s.who), s.path);
    return recorder.take();
  } finally {
    await recorder.db.close();
  }
}

const median = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 1000);
};
async function measure(what: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await what();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await what();
    times.push(performance.now() - t);
  }
  return median(times);
}

const pages = ['list-global', 'list-restricted'];
const recorded = new Map<string, Statement[]>();
for (const page of pages) recorded.set(page, await pageStatements(page).catch(() => []));

const ways: [string, string | undefined, PoolMode][] = [
  ['direct, session mode', direct, 'session'],
  ['direct, transaction mode', direct, 'transaction'],
  ['PgBouncer, session mode', values['session-pooler'], 'session'],
  ['PgBouncer, transaction mode', values['transaction-pooler'], 'transaction'],
];
const rows: string[] = [];
for (const [label, url, poolMode] of ways) {
  if (!url) continue;
  const db: Db = await open(url, poolMode);
  try {
    const one = () => db.query('Bench', 'SELECT $1::int AS n', [1]);
    const cells = [
      await measure(one),
      await measure(() => db.transaction((tx) => tx.query('Bench', 'SELECT $1::int AS n', [1]))),
    ];
    for (const [, statements] of recorded) {
      cells.push(
        statements.length
          ? await measure(async () => {
              for (const s of statements) await db.query(s.name, s.sql, s.params);
            })
          : Number.NaN,
      );
    }
    rows.push(`| ${label} | ${cells.join(' | ')} |`);
  } finally {
    await db.close();
  }
}
process.stdout.write(
  `| way (median µs, ${n} one after another) | a statement | a transaction of one statement | ${[...recorded.keys()].map((k) => `${k}'s statements`).join(' | ')} |\n` +
    `|---|---|---|${[...recorded.keys()].map(() => '---|').join('')}\n${rows.join('\n')}\n`,
);
