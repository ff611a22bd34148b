/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement the service sends for one request of a scenario:
 *   node --import tsx bench/explain.ts --database-url postgres://…/bench_1m --scenario list-restricted
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { compose } from '../src/compose.js';
import { parseConfig } from '../src/config.js';
import { openDb } from '../src/store/open.js';
import { ensureCursorKey } from '../src/store/service-info.js';
import { recording } from './lib/db-limit.js';
import { type Dataset, READS, requestWork, secretOf } from './lib/scenarios.js';

const { values } = parseArgs({
  options: { 'database-url': { type: 'string' }, scenario: { type: 'string' }, path: { type: 'string' } },
});
const databaseUrl = values['database-url']!;
const dataset = JSON.parse(
  readFileSync(
    path.resolve(import.meta.dirname, '.data', `${new URL(databaseUrl).pathname.slice(1)}.json`),
    'utf8',
  ),
) as Dataset;
const scenario = READS.find((s) => s.name === values.scenario)!;
const recorder = recording(
  await openDb({
    databaseUrl,
    dataDir: os.tmpdir(),
    statementTimeoutMs: 60_000,
    connectTimeoutMs: 5000,
    poolSize: 2,
  }),
);
const useCases = compose(parseConfig({ DATA_DIR: os.tmpdir(), DATABASE_URL: databaseUrl }), recorder.db, {
  cursorKey: await ensureCursorKey(recorder.db),
  publicOrigin: 'https://localhost',
});
recorder.take();
await requestWork(useCases, secretOf(dataset, scenario.who), values.path ?? scenario.path);
const client = new pg.Client({ connectionString: databaseUrl });
await client.connect();
for (const s of recorder.take()) {
  const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`, [...s.params]);
  process.stdout.write(`\n=== ${s.name}\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
}
await client.end();
await recorder.db.close();
