import type { ChildProcess } from 'node:child_process';

/**
 * Stops a child process and resolves once it is gone: SIGTERM, then SIGKILL after `graceMs`. A
 * test removes a service's data directory only after this: removed while the service still
 * writes, the removal fails (ENOTEMPTY) or the service writes into a directory being removed.
 */
export async function stopChild(child: ChildProcess | undefined, graceMs = 10_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(killer);
}
