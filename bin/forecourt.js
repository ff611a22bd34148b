#!/usr/bin/env node
// The `forecourt` command: the compiled service (dist/, built by `npm ci` through the `prepare`
// script, or by `npm run build`). Development runs the TypeScript sources with `npm run dev`.
import { readFileSync } from 'node:fs';

const command = process.argv[2];
if (command === 'demo' || command === 'serve') stopWithStarter();

try {
  await import('../dist/cli/bin.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/bin.js')) {
    throw error;
  }
  process.stderr.write('forecourt: the service is not built yet; run `npm run build` (npm ci does it)\n');
  process.exitCode = 1;
}

/**
 * `npm run demo` and `npm start` run this process under `sh -c`, and npm passes a SIGTERM or
 * SIGINT sent to its PID (by a script, a service manager, `docker stop`) to that shell only: the
 * shell ended and this process lived on, holding the port. So a process started by an npm script
 * stops itself (SIGTERM to itself: the same graceful stop as a signal) when the process that
 * started it is gone: its parent (the shell) or, on Linux, the shell's parent (npm itself, killed
 * with SIGKILL while the shell waits). A process with an IPC channel stops when its parent
 * disconnects. Started directly (`node bin/forecourt.js serve`, systemd, `nohup … &`), it does
 * not watch its parent: a service may outlive the shell that started it.
 */
function stopWithStarter() {
  let timer;
  const stop = (why) => {
    clearInterval(timer);
    process.stderr.write(`forecourt: ${why}; stopping\n`);
    process.kill(process.pid, 'SIGTERM');
  };
  if (typeof process.send === 'function') {
    process.once('disconnect', () => stop('the parent process closed its channel'));
  }
  const byNpm = process.env.npm_lifecycle_event !== undefined;
  if (!byNpm) return;
  const parent = process.ppid;
  const grandparent = parentOf(parent);
  timer = setInterval(() => {
    if (process.ppid !== parent) return stop(`the process that started it (pid ${parent}) is gone`);
    if (grandparent !== undefined && parentOf(parent) !== grandparent) {
      stop(`npm (pid ${grandparent}), which started it, is gone`);
    }
  }, 250);
  timer.unref();
}

/** The parent of process `pid`, from /proc (Linux); undefined where that cannot be read. */
function parentOf(pid) {
  try {
    // "pid (comm) state ppid …": comm may hold spaces and brackets, so read after the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}
