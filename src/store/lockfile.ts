import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database in ${dir} is in use by another Forecourt process (pid ${pid}). ` +
        'PGlite allows one process per data directory: stop that process, use another DATA_DIR, ' +
        'or set DATABASE_URL to use PostgreSQL.',
    );
    this.name = 'DataDirLockedError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An exclusive lock held by this process, written as a file containing our pid. A lock left by a
 * process that died (SIGKILL, power loss) is stale and taken over.
 */
export function acquireDirLock(lockPath: string, describedDir: string): { release(): void } {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(lockPath);
          } catch {}
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
      if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) {
        throw new DataDirLockedError(describedDir, pid);
      }
      if (pid === process.pid) throw new DataDirLockedError(describedDir, pid);
      try {
        unlinkSync(lockPath);
      } catch {}
    }
  }
  throw new Error(`Could not take the lock ${lockPath}`);
}
