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

/**
 * Whether process `pid` is running. Signal 0 alone is not enough: a process that ended stays in the
 * process table as a zombie until its parent collects it, and one whose parent is gone waits for
 * PID 1 to do that, which in some containers happens late or never. /proc (Linux) tells a zombie
 * ("Z") from a running process; where it cannot be read, signal 0's answer stands.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // Gone between the two looks; anything else (no /proc): signal 0's answer.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  // "pid (comm) state …": comm may hold spaces and brackets, so read after the last ")".
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
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
      if (Number.isInteger(pid) && pid !== process.pid && isRunning(pid)) {
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
