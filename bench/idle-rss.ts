/**
 * Idle RSS of `forecourt serve` and `forecourt demo` on the embedded database: a first start on a
 * new DATA_DIR, then a later start on the same one, each measured `--idle` seconds after the
 * service said it was ready (the demo: after its seed). `npm run bench:rss -- --runs 3`;
 * `--database-url postgres://…` measures `serve` on PostgreSQL instead (its database is not
 * created or dropped here). Uses the built service (bin/forecourt.js): `npm run build` first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { rssMb } from './lib/usage.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    idle: { type: 'string', default: '25' },
    commands: { type: 'string', default: 'serve,demo' },
    'database-url': { type: 'string' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const READY: Record<string, string> = { serve: 'Forecourt is listening', demo: 'Forecourt demo is running' };
let port = 18_700 + (process.pid % 500);

/** One start: waits for its ready line, idles, reads VmRSS, stops it (SIGTERM) and waits for exit. */
async function measure(command: string, env: Record<string, string>): Promise<number> {
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'bin/forecourt.js'), command], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port++), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(READY[command]!)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}):\n${output}`)));
  });
  await new Promise((resolve) => setTimeout(resolve, Number(values.idle) * 1000));
  const rss = rssMb(child.pid!);
  child.kill('SIGTERM');
  await exited;
  if (rss === undefined) throw new Error(`no RSS for ${command}`);
  return rss;
}

const databaseUrl = values['database-url'];
for (const command of values.commands!.split(',')) {
  for (let run = 1; run <= Number(values.runs); run++) {
    // A new directory each run: the embedded database's, or (PostgreSQL) the certificate's.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-rss-'));
    try {
      if (databaseUrl) {
        const rss = await measure(command, { DATABASE_URL: databaseUrl, DATA_DIR: dataDir });
        console.log(`${command} postgres run ${run}: ${rss} MB`);
        continue;
      }
      const first = await measure(command, { DATA_DIR: dataDir });
      const later = await measure(command, { DATA_DIR: dataDir });
      console.log(`${command} run ${run}: first start ${first} MB, later start ${later} MB`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}
