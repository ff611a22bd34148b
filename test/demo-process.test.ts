import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { isRunning } from '../src/store/lockfile.js';
import { baseEnv } from './helpers/base-env.js';
import { seedEmbeddedDb } from './helpers/pglite-template.js';

/**
 * `npm run demo` stopped as a script or a service manager stops it: a signal to the npm process's
 * PID. npm hands it to the `sh -c` it ran the script in, which ended (SIGTERM) or waited (SIGINT),
 * and the demo (node, the shell's child) lived on, holding its port. The scripts now `exec` the
 * command, so npm's signal reaches the demo; and bin/forecourt.js stops a process started by an npm
 * script when the process that started it is gone (npm killed, or a shell in between ended).
 */
const ROOT = path.resolve(import.meta.dirname, '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// A demo that ended is gone even while it waits, a zombie, for PID 1 to collect it (its parent,
// the shell, was killed): in some containers that is late or never.
const alive = isRunning;

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

// The banner and the log line that names the demo's pid come on separate streams (the log is
// written asynchronously): started once both are out, not the banner alone.
const started = (out: string) =>
  out.includes('Press Ctrl+C to stop.') && /"msg":"Forecourt is listening"/.test(out);

/**
 * Stops what a test started: npm or the shell, and the demo under it, by the process group each is
 * started in (`detached`), whether or not the demo's pid was learned. A demo left running holds
 * the test process's pipes, and the test process (and the run) would never end.
 */
const stopGroup = (pid: number | undefined) => {
  try {
    if (pid) process.kill(-pid, 'SIGKILL');
  } catch {}
};

async function until(what: string, done: () => Promise<boolean> | boolean, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
  test(`a ${signal} to the PID of \`npm run demo\` ends the demo and frees its port`, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-demo-process-'));
    await seedEmbeddedDb(dataDir);
    const port = await freePort();
    const npm = spawn('npm', ['run', '--silent', 'demo'], {
      cwd: ROOT,
      env: { ...baseEnv(), DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    npm.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
    });
    npm.stderr!.on('data', (c: Buffer) => {
      out += c.toString();
    });
    let demoPid: number | undefined;
    try {
      await until('the demo to start', () => started(out), 90_000);
      // The demo's own process (node), from its log line: npm's child's child.
      demoPid = Number(/"pid":(\d+)[^\n]*"msg":"Forecourt is listening"/.exec(out)?.[1]);
      assert.ok(demoPid && demoPid !== npm.pid, out);
      assert.ok(await portOpen(port));

      npm.kill(signal);
      const tookMs = await until(
        `the demo (pid ${demoPid}) to end after ${signal} to npm (pid ${npm.pid})`,
        async () => !alive(demoPid!) && !(await portOpen(port)),
        10_000,
      );
      assert.ok(tookMs < 10_000);
      // npm passes SIGTERM and SIGINT on to its script's process (the demo itself, which the script
      // `exec`s); npm killed outright is seen by the demo, which then stops itself.
      if (signal === 'SIGKILL')
        assert.match(out, /forecourt: the process that started it \(pid \d+\) is gone; stopping/);
    } finally {
      stopGroup(npm.pid);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

test('a demo started by an npm script through a shell that does not exec it stops when that shell ends', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-demo-process-'));
  await seedEmbeddedDb(dataDir);
  const port = await freePort();
  // As npm ran the script before it said `exec` (and as any wrapper script may): sh, then node.
  const shell = spawn('sh', ['-c', `node ${path.join(ROOT, 'bin/forecourt.js')} demo; echo "shell done"`], {
    cwd: ROOT,
    env: {
      ...baseEnv(),
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      npm_lifecycle_event: 'demo',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  shell.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  shell.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  let demoPid: number | undefined;
  try {
    await until('the demo to start', () => started(out), 90_000);
    demoPid = Number(/"pid":(\d+)[^\n]*"msg":"Forecourt is listening"/.exec(out)?.[1]);
    assert.ok(demoPid && demoPid !== shell.pid, out);
    shell.kill('SIGKILL');
    await until(
      `the demo (pid ${demoPid}) to end`,
      async () => !alive(demoPid!) && !(await portOpen(port)),
      10_000,
    );
    assert.match(out, /forecourt: the process that started it \(pid \d+\) is gone; stopping/);
  } finally {
    stopGroup(shell.pid);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
