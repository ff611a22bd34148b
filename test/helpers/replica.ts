import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

/**
 * A real streaming replica for tests: a primary of the test's own (initdb in a temporary
 * directory, its own port), a replica made from it with pg_basebackup -R, both started beside the
 * machine's PostgreSQL and removed afterwards. PostgreSQL refuses to run as root, so as root the
 * binaries run as the `postgres` user.
 */
export interface ReplicaPair {
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  stop(): void;
}

function binDir(): string {
  const base = '/usr/lib/postgresql';
  const version = readdirSync(base).sort((a, b) => Number(b) - Number(a))[0];
  if (!version) throw new Error(`no PostgreSQL binaries under ${base}`);
  return path.join(base, version, 'bin');
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : path.join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args,
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        cwd: os.tmpdir(),
      },
    );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-replica-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const primary = path.join(dir, 'primary');
  const replica = path.join(dir, 'replica');
  const options = (port: number) =>
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=32MB`;
  const started: string[] = [];
  const stop = () => {
    for (const data of started.reverse()) {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // already down
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The bootstrap superuser is named like the machine's (root): the same URLs work.
    run('initdb', ['-D', primary, '-U', 'root', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    run('pg_ctl', [
      '-D',
      primary,
      '-o',
      options(primaryPort),
      '-l',
      path.join(dir, 'primary.log'),
      '-w',
      'start',
    ]);
    started.push(primary);
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'root',
      '-D',
      replica,
      '-R',
      '-X',
      'stream',
    ]);
    run('pg_ctl', [
      '-D',
      replica,
      '-o',
      options(replicaPort),
      '-l',
      path.join(dir, 'replica.log'),
      '-w',
      'start',
    ]);
    started.push(replica);
  } catch (error) {
    stop();
    const e = error as { stderr?: Buffer };
    throw new Error(`could not start a primary and its replica: ${e.stderr?.toString() ?? error}`);
  }
  return {
    primaryUrl: (database) => `postgres://root@127.0.0.1:${primaryPort}/${database}`,
    replicaUrl: (database) => `postgres://root@127.0.0.1:${replicaPort}/${database}`,
    stop,
  };
}
