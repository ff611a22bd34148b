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
 * npm runs a script under `sh -c` and passes a SIGTERM or SIGINT sent to its PID (by a script, a
 * service manager, `docker stop`) to that shell only; dash neither execs the command nor passes
 * the signal on, so the service lived on, holding its port. The `start` and `demo` scripts now
 * `exec` the command, so npm's signal reaches this process. Besides, a process started by an npm
 * script stops itself (SIGTERM to itself: the same graceful stop as a signal) when the process
 * that started it is gone: its parent (npm killed outright, or a shell in between ended) or, on
 * Linux, when that parent is a shell, the shell's parent (npm killed while the shell waits). A
 * process with an IPC channel stops when its parent disconnects. Started otherwise (`node
 * bin/forecourt.js serve`, systemd, `nohup … &`) it does not watch: a service may outlive its shell.
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
  // npm's own parent only matters when a shell stands between (npm then gone, the shell waits on):
  // with npm the parent (the scripts `exec`), `nohup npm start &` must outlive its terminal.
  const grandparent = isNpm(parent) ? undefined : parentOf(parent);
  timer = setInterval(() => {
    if (process.ppid !== parent) return stop(`the process that started it (pid ${parent}) is gone`);
    if (grandparent !== undefined && parentOf(parent) !== grandparent) {
      stop(`npm (pid ${grandparent}), which started it, is gone`);
    }
  }, 250);
  timer.unref();
}

/** Whether process `pid` is npm (its title, from /proc on Linux; false where that cannot be read). */
function isNpm(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('npm');
  } catch {
    return false;
  }
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
