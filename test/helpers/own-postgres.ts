import { execFile, execFileSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * PostgreSQL servers of a test's own: initdb in a temporary directory, a port of their own, the
 * machine's binaries. For what only stopping a server shows (an outage, a crash under load) and
 * for a primary with its replica: the machine's server is shared by every file that runs at the
 * same time (and by CI's other passes), so no test stops it. PostgreSQL refuses to run as root, so
 * as root the binaries run as the `postgres` user.
 */

/** The binaries of the machine's cluster (/etc/postgresql/<version>), else the newest installed. */
function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  const version =
    versions('/etc/postgresql').find((v) => existsSync(path.join(base, v, 'bin', 'initdb'))) ??
    versions(base).sort((a, b) => Number(b) - Number(a))[0];
  if (!version) throw new Error(`no PostgreSQL binaries under ${base}`);
  return path.join(base, version, 'bin');
}

/**
 * A port for a server that stops and starts on it again: below the range the kernel hands out for
 * port 0 (32768-60999 on Linux), where every service a test boots meanwhile takes its port, so that
 * nothing takes it while the server is down. Reserved between test processes by a lock file in
 * /tmp (created exclusively; the same directory whatever TMPDIR a run sets), and free when taken.
 */
export async function reservePort(): Promise<{ port: number; release(): void }> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const lock = `/tmp/forecourt-pg-port-${port}.lock`;
    try {
      closeSync(openSync(lock, 'wx'));
    } catch {
      continue; // another test's
    }
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return { port, release: () => rmSync(lock, { force: true }) };
    rmSync(lock, { force: true });
  }
  throw new Error('no free port in 20000-31999 for a PostgreSQL server of the test');
}

/** The end of a server's log, for an error that says why it did not start. */
function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '(no log)';
  }
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

/**
 * pg_ctl's arguments to start the cluster in `data` on `port` (TCP only: no Unix socket, whose
 * path has a length limit), its log in `dir`. fsync off: a crash test stops the server, not the
 * machine, so what it wrote survives in the page cache either way.
 */
export function startArgs(data: string, port: number, dir: string, name: string): string[] {
  const options = `-p ${port} -c unix_socket_directories='' -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=32MB`;
  return ['-D', data, '-o', options, '-l', path.join(dir, `${name}.log`), '-w', 'start'];
}

/** Runs pg_ctl (start or stop); when it fails, the error carries the end of the server's log. */
export function pgCtl(args: string[], log: string): void {
  try {
    pgTool('pg_ctl', args);
  } catch (error) {
    const e = error as { stderr?: Buffer };
    throw new Error(`pg_ctl ${args.at(-1)} failed: ${e.stderr?.toString() ?? error}\n${logTail(log)}`);
  }
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
  const log = path.join(dir, 'server.log');
  const { port, release } = await reservePort();
  const stop = (mode: 'fast' | 'immediate' = 'fast') => pgCtl(['-D', data, '-m', mode, '-w', 'stop'], log);
  const start = () => pgCtl(startArgs(data, port, dir, 'server'), log);
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('exit', remove);
    try {
      pgTool('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
    release();
  };
  // A test process that ends without its cleanup (an uncaught error) leaves no server behind.
  process.once('exit', remove);
  try {
    initCluster(data);
    start();
  } catch (error) {
    const message = `could not start a PostgreSQL server of the test's own: ${(error as { stderr?: Buffer }).stderr?.toString() ?? error}`;
    remove();
    throw new Error(message);
  }
  return {
    url: (database) => `postgres://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async crashAndRestart(pauseMs) {
      // Without blocking: the service and the load the test drives run through the outage.
      await pgToolAsync('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      await new Promise((r) => setTimeout(r, pauseMs));
      try {
        await pgToolAsync('pg_ctl', startArgs(data, port, dir, 'server'));
      } catch (error) {
        throw new Error(`PostgreSQL did not start again: ${(error as Error).message}\n${logTail(log)}`);
      }
    },
    remove,
  };
}
