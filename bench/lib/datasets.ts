import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

/** Loading bench/dataset.ts datasets, shared by `npm run bench` and `npm run soak`. */
const BENCH = path.resolve(import.meta.dirname, '..');
/** The PostgreSQL server the runs create their databases on. */
export const server = process.env.BENCH_PG ?? 'postgres://root@127.0.0.1:5432';
const tsx = ['--import', 'tsx'];
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

export async function sql(database: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: `${server}/${database}` });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** A PostgreSQL database holding `listings` listings from bench/dataset.ts, loaded if missing (or `fresh`). */
export async function postgresDataset(name: string, listings: number, fresh: boolean): Promise<string> {
  const url = `${server}/${name}`;
  const info = path.join(BENCH, '.data', `${name}.json`);
  const exists =
    (await sql('postgres', `SELECT 1 FROM pg_database WHERE datname = '${name}'`)).rowCount === 1;
  if (!fresh && exists && existsSync(info)) return url;
  log(`loading ${listings} listings into ${name}`);
  await sql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await sql('postgres', `CREATE DATABASE ${name}`);
  execFileSync(process.execPath, [...tsx, path.join(BENCH, 'dataset.ts'), '--listings', String(listings)], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return url;
}

/** A PGlite data directory holding `listings` listings, loaded if missing. */
export function pgliteDataset(listings: number): string {
  const dir = path.join(BENCH, '.data', `pglite-${listings / 1000}k`);
  const info = `${dir}.json`;
  if (existsSync(info) && existsSync(dir)) return dir;
  log(`loading ${listings} listings into PGlite (${dir})`);
  rmSync(dir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [...tsx, path.join(BENCH, 'dataset.ts'), '--listings', String(listings), '--out', info],
    {
      env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  return dir;
}
