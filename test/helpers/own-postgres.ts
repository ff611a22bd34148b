import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

/**
 * PostgreSQL servers of a test's own: initdb in a temporary directory, a port of their own, the
 * machine's binaries. For what only stopping a server shows (an outage, a crash under load) and
 * for a primary with its replica: the machine's server is shared by every file that runs at the
 * same time (and by CI's other passes), so no test stops it. PostgreSQL refuses to run as root, so
 * as root the binaries run as the `postgres` user.
 */

function binDir(): string {
  const base = '/usr/lib/postgresql';
  const version = readdirSync(base).sort((a, b) => Number(b) - Number(a))[0];
  if (!version) throw new Error(`no PostgreSQL binaries under ${base}`);
  return path.join(base, version, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** How to run one of PostgreSQL's programs: as `postgres` through runuser when we are root. */
function command(tool: string, args: string[]): [string, string[]] {
  const program = path.join(binDir(), tool);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
}

/** Runs one of PostgreSQL's programs and waits for it, blocking this process's event loop. */
export function pgTool(tool: string, args: string[]): Buffer {
  const [file, argv] = command(tool, args);
  return execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: os.tmpdir() });
}

/** The same without blocking: the service and the load a test drives keep running meanwhile. */
async function pgToolAsync(tool: string, args: string[]): Promise<void> {
  const [file, argv] = command(tool, args);
  await promisify(execFile)(file, argv, { cwd: os.tmpdir() });
}

/** A new temporary directory that the server's user owns. */
export function serverDirectory(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

/** pg_ctl's arguments to start the cluster in `data` on `port`, its socket and log in `dir`. */
export function startArgs(data: string, port: number, dir: string, name: string): string[] {
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=32MB`;
  return ['-D', data, '-o', options, '-l', path.join(dir, `${name}.log`), '-w', 'start'];
}

/** initdb, with the bootstrap superuser named like the machine's (root): the same URLs work. */
export function initCluster(data: string): void {
  pgTool('initdb', ['-D', data, '-U', 'root', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
}

export interface OwnServer {
  url(database: string): string;
  /** Stops the server (`pg_ctl stop -m mode`), waiting until it is down. */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again, waiting until it accepts connections. */
  start(): void;
  /** A crash: immediate stop (no checkpoint; recovery from the WAL), `pauseMs` down, start. */
  crashAndRestart(pauseMs: number): Promise<void>;
  /** Stops it if it runs and removes its directory. */
  remove(): void;
}

/** A server of the test's own, started and ready. */
export async function startOwnServer(): Promise<OwnServer> {
  const dir = serverDirectory('forecourt-pg-');
  const data = path.join(dir, 'data');
  const port = await freePort();
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    pgTool('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  };
  const start = () => {
    pgTool('pg_ctl', startArgs(data, port, dir, 'server'));
  };
  const remove = () => {
    try {
      stop('immediate');
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    initCluster(data);
    start();
  } catch (error) {
    remove();
    const e = error as { stderr?: Buffer };
    throw new Error(
      `could not start a PostgreSQL server of the test's own: ${e.stderr?.toString() ?? error}`,
    );
  }
  return {
    url: (database) => `postgres://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async crashAndRestart(pauseMs) {
      await pgToolAsync('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      await new Promise((r) => setTimeout(r, pauseMs));
      await pgToolAsync('pg_ctl', startArgs(data, port, dir, 'server'));
    },
    remove,
  };
}
