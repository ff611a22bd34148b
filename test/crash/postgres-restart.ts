import { execFileSync, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';

/**
 * Crashes the machine's PostgreSQL server (`pg_ctlcluster … stop -m immediate`: no checkpoint,
 * recovery from the WAL at the next start) and starts it again, the way test/helpers/postgres.ts
 * finds the cluster. Other agents and test files use the same server, so:
 *
 * - stop, pause and start run as ONE shell script under `flock /tmp/pg-restart.lock`, in its own
 *   process group: the start happens even if this test process dies in between, and no two
 *   restarts overlap;
 * - `flock -o`: the script does not inherit the locked descriptor. Without it the server started by
 *   the script (a daemon) keeps the descriptor open and holds the lock for as long as it runs, and
 *   every later `flock /tmp/pg-restart.lock` waits forever;
 * - the script runs asynchronously, so the service and the load keep running through the outage
 *   (execFileSync would freeze this process's event loop, and with it the load).
 */
const LOCK = '/tmp/pg-restart.lock';
const version = () => readdirSync('/etc/postgresql')[0]!;
const ctl = (action: string) => `pg_ctlcluster --skip-systemctl-redirect ${version()} main ${action}`;
const waitReady = `for i in $(seq 1 240); do pg_isready -q -h 127.0.0.1 -p 5432 && exit 0; sleep 0.25; done; exit 1`;

export function isRunning(): boolean {
  try {
    execFileSync('pg_isready', ['-q', '-h', '127.0.0.1', '-p', '5432']);
    return true;
  } catch {
    return false;
  }
}

/** Immediate stop, `pauseMs` down, start; resolves once the server accepts connections again. */
export function crashAndRestart(pauseMs: number): Promise<void> {
  const script = `${ctl('stop -m immediate')}; sleep ${(pauseMs / 1000).toFixed(3)}; ${ctl('start')}; ${waitReady}`;
  return new Promise((resolve, reject) => {
    const child = spawn('flock', ['-o', LOCK, 'sh', '-c', script], { detached: true, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`PostgreSQL restart script exited with ${code}`)),
    );
  });
}

/** For finally blocks: starts the server (under the lock) if it is not running. */
export function ensureRunning(): void {
  if (isRunning()) return;
  execFileSync(
    'flock',
    ['-o', LOCK, 'sh', '-c', `pg_isready -q -h 127.0.0.1 -p 5432 || ${ctl('start')}; ${waitReady}`],
    {
      stdio: 'ignore',
    },
  );
}
