/**
 * `npm run bench`: the whole benchmark matrix on this machine, with the targets of issue 7 checked.
 *   - PostgreSQL, 1M listings: every scenario, each against its limits;
 *   - PostgreSQL at 10k and 100k: the list scenarios again (growth);
 *   - PGlite at 100k against PostgreSQL at 100k: the main scenarios (embedded ratio);
 *   - the peer, Platformatic DB (bench/peer, installed on first use under Node.js 22), on the
 *     list-global page of the PostgreSQL 100k run, with and without its total, and twice more
 *     (three pairs, compared by their sums).
 * Datasets are loaded when missing (databases bench_10k, bench_100k, bench_1m on the server of
 * BENCH_PG, default postgres://root@127.0.0.1:5432; PGlite in bench/.data/pglite-100k).
 * Results: bench/results/<date>.json, and a Markdown table on stdout for docs/benchmarks.md.
 *
 *   npm run bench                      the full matrix (over 25 minutes; datasets and the peer's install first)
 *   npm run bench -- --smoke           10k listings, 1 s per scenario: proves it runs (CI)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pgliteDataset, postgresDataset, server, sql } from './lib/datasets.js';
import { writeRecord } from './lib/record.js';
import {
  markdown,
  type RecordsResult,
  type Run,
  recordsMarkdown,
  recordsTargets,
  targets,
  type WebhookResult,
  webhookMarkdown,
  webhookTargets,
} from './lib/report.js';

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    connections: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
  },
});
const HERE = import.meta.dirname;
const tsx = ['--import', 'tsx'];
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

function run(
  label: string,
  target: { url?: string; dir?: string },
  only?: string[],
  extra: string[] = [],
): Run {
  log(`run ${label}${only ? ` (${only.join(', ')})` : ''}`);
  const args = [
    ...tsx,
    path.join(HERE, 'run.ts'),
    '--label',
    label,
    '--connections',
    values.connections!,
    '--duration',
    values.smoke ? '1' : values.duration!,
    ...(target.url
      ? ['--database-url', target.url]
      : ['--data-dir', target.dir!, '--dataset', `${target.dir}.json`]),
    ...(only ? ['--only', only.join(',')] : []),
    ...extra,
  ];
  const child = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 26,
  });
  if (child.status !== 0) throw new Error(`bench run ${label} failed (exit ${child.status})`);
  return JSON.parse(child.stdout) as Run;
}

/** bench/webhooks.ts on a fresh database of `listings` (its throughput runs write into it). */
async function webhooks(listings: number): Promise<WebhookResult> {
  const name = `bench_webhooks_${listings / 1000}k`;
  {
    const url = await postgresDataset(name, listings, true);
    log(`webhooks (${listings.toLocaleString('en')} listings)`);
    const child = spawnSync(
      process.execPath,
      [
        ...tsx,
        path.join(HERE, 'webhooks.ts'),
        '--database-url',
        url,
        '--dataset',
        path.join(HERE, '.data', `${name}.json`),
        '--connections',
        values.connections!,
        '--duration',
        values.duration!,
        ...(values.smoke ? ['--smoke'] : []),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await sql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (child.status !== 0) throw new Error(`bench webhooks failed (exit ${child.status})`);
    return JSON.parse(child.stdout) as WebhookResult;
  }
}

/** bench/request-records.ts on a fresh, empty database. */
async function requestRecords(): Promise<RecordsResult> {
  const name = 'bench_request_records';
  await sql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await sql('postgres', `CREATE DATABASE ${name}`);
  log('request records');
  const child = spawnSync(
    process.execPath,
    [
      ...tsx,
      path.join(HERE, 'request-records.ts'),
      '--database-url',
      `${server}/${name}`,
      ...(values.smoke ? ['--smoke'] : []),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await sql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  if (child.status !== 0) throw new Error(`bench request-records failed (exit ${child.status})`);
  return JSON.parse(child.stdout) as RecordsResult;
}

const LISTS = ['list-restricted', 'list-global'];
const MAIN = [...LISTS, 'locations-500-with-counts', 'put-single', 'bulk-upsert-100'];
const runs: Run[] = [];
const started = Date.now();

if (values.smoke) {
  const url = await postgresDataset('bench_smoke_10k', 10_000, true);
  const result = run('smoke-10k', { url });
  await sql('postgres', 'DROP DATABASE IF EXISTS bench_smoke_10k WITH (FORCE)');
  const failed = result.scenarios.filter((s) => s.service.errors > 0 || s.service.requests === 0);
  for (const s of result.scenarios)
    log(
      `${s.name}: ${s.service.requestsPerSecond} req/s, p99 ${s.service.p99} ms, ${s.service.errors} errors`,
    );
  if (failed.length)
    throw new Error(`smoke: errors or no requests in ${failed.map((s) => s.name).join(', ')}`);
  const hooks = await webhooks(10_000);
  log(
    `webhooks (${hooks.endpoints} endpoints): p99 ${hooks.latency.one.p99} / ${hooks.latency.many.p99} ms, throughput ratio ${hooks.throughput.ratio}`,
  );
  const records = await requestRecords();
  log(`request records: p99 overhead ${records.p99OverheadMs} ms (smoke: not judged)`);
  log(`smoke passed in ${Math.round((Date.now() - started) / 1000)} s`);
} else {
  const pg1m = await postgresDataset('bench_1m', 1_000_000, false);
  const pg100k = await postgresDataset('bench_100k', 100_000, false);
  const pg10k = await postgresDataset('bench_10k', 10_000, false);
  const lite100k = pgliteDataset(100_000);
  runs.push(run('postgres-1m', { url: pg1m }));
  // The peer (Platformatic DB, bench/peer) on the same database, in the same run; list-global
  // against it twice more, alike (ours, then the peer's): bench/lib/report.ts compares the sums of
  // the three pairs, as one pair of 10 s runs spreads 10 to 20 %.
  runs.push(run('postgres-100k', { url: pg100k }, MAIN, ['--peer']));
  for (const round of [2, 3])
    runs.push(run(`postgres-100k-peer-${round}`, { url: pg100k }, ['list-global'], ['--peer']));
  // Compression (issue 45): the same page with and without gzip, both `--service-only` (a run
  // that also measures the limits serves fewer pages: the two modes do not compare), alternated
  // for three rounds (single runs of 10 s spread 10 to 20 %): bench/lib/report.ts compares sums.
  for (let round = 1; round <= 3; round++)
    for (const mode of ['plain', 'gzip'])
      runs.push(
        run(
          `postgres-100k-${mode}-${round}`,
          { url: pg100k },
          ['list-global'],
          ['--service-only', ...(mode === 'gzip' ? ['--accept-encoding', 'gzip'] : [])],
        ),
      );
  runs.push(run('postgres-10k', { url: pg10k }, LISTS));
  runs.push(run('pglite-100k', { dir: lite100k }, MAIN));
  const hooks = await webhooks(100_000);
  const records = await requestRecords();

  const versions = {
    node: process.version,
    postgres: (await sql('postgres', 'SHOW server_version')).rows[0].server_version as string,
    pglite: JSON.parse(
      readFileSync(path.join(HERE, '../node_modules/@electric-sql/pglite/package.json'), 'utf8'),
    ).version,
    fastify: JSON.parse(readFileSync(path.join(HERE, '../node_modules/fastify/package.json'), 'utf8'))
      .version,
    autocannon: JSON.parse(readFileSync(path.join(HERE, '../node_modules/autocannon/package.json'), 'utf8'))
      .version,
  };
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.type()} ${os.release()}`,
  };
  const result = {
    date: new Date().toISOString(),
    machine,
    versions,
    connections: Number(values.connections),
    durationS: Number(values.duration),
    runs,
    webhooks: hooks,
    requestRecords: records,
    targets: [...targets(runs), ...webhookTargets(hooks), ...recordsTargets(records)],
  };
  const dir = path.join(HERE, 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${result.date.slice(0, 10)}.json`);
  writeRecord(file, result);
  log(`wrote ${path.relative(process.cwd(), file)} in ${Math.round((Date.now() - started) / 1000)} s`);
  process.stdout.write(markdown(result));
  process.stdout.write(webhookMarkdown(hooks));
  process.stdout.write(recordsMarkdown(records));
}
