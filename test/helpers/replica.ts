import { rmSync } from 'node:fs';
import path from 'node:path';
import { initCluster, pgCtl, pgTool, reservePort, serverDirectory, startArgs } from './own-postgres.js';

/**
 * A real streaming replica for tests: a primary of the test's own (initdb in a temporary
 * directory, its own port), a replica made from it with pg_basebackup -R, both started beside the
 * machine's PostgreSQL and removed afterwards.
 */
export interface ReplicaPair {
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  stop(): void;
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const dir = serverDirectory('forecourt-replica-');
  const ports = [await reservePort(), await reservePort()];
  const [primaryPort, replicaPort] = ports.map((p) => p.port) as [number, number];
  const primary = path.join(dir, 'primary');
  const replica = path.join(dir, 'replica');
  const started: string[] = [];
  const stop = () => {
    for (const data of [...started].reverse()) {
      try {
        pgTool('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // already down
      }
    }
    rmSync(dir, { recursive: true, force: true });
    for (const p of ports) p.release();
  };
  try {
    initCluster(primary);
    pgCtl(startArgs(primary, primaryPort, dir, 'primary'), path.join(dir, 'primary.log'));
    started.push(primary);
    pgTool('pg_basebackup', [
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
    pgCtl(startArgs(replica, replicaPort, dir, 'replica'), path.join(dir, 'replica.log'));
    started.push(replica);
  } catch (error) {
    const e = error as { stderr?: Buffer };
    const message = `could not start a primary and its replica: ${e.stderr?.toString() ?? error}`;
    stop();
    throw new Error(message);
  }
  return {
    primaryUrl: (database) => `postgres://root@127.0.0.1:${primaryPort}/${database}`,
    replicaUrl: (database) => `postgres://root@127.0.0.1:${replicaPort}/${database}`,
    stop,
  };
}
