import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';

const ROOT = path.resolve(import.meta.dirname, '../..');

// A run that fails half-way must not leave a service holding the port and the database.
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
// Also when the run is interrupted (Ctrl+C, kill): a service left running would go on delivering
// webhooks into the next run's database of the same name, and skew it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => process.exit(130));
}

export interface Proc {
  url: string;
  /** The process id, for sampling its memory (/proc/<pid>/status). */
  pid: number;
  /** Its stdout and stderr (removed by stop()). */
  log: string;
  dataDir: string;
  ca: string;
  dispatcher: Agent;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitUntil(url: string, dispatcher: Agent, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}); see ${log}`);
    try {
      const res = await request(url, { dispatcher });
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} not ready in 120 s; see ${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function stopper(child: ChildProcess, dataDir: string | undefined, dispatcher: Agent) {
  children.add(child);
  return async () => {
    children.delete(child);
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await dispatcher.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
}

/**
 * `forecourt serve` as its own process, as in production: info-level JSON logs (to a file, as a
 * log shipper would take them), rate limits out of the way.
 */
export async function startService(
  env: Record<string, string>,
  options: { root?: string } = {},
): Promise<Proc> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'forecourt-bench-'));
  const dataDir = env.DATA_DIR ?? tmp;
  const port = await freePort();
  const log = path.join(tmp, 'service.log');
  // BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service (not allowed in NODE_OPTIONS).
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // BENCH_SERVICE_ENV="EMBEDDED_VACUUM_INTERVAL_MS=0 …" sets the service's configuration for a run.
  const extraEnv = Object.fromEntries(
    (process.env.BENCH_SERVICE_ENV?.split(' ').filter(Boolean) ?? []).map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`BENCH_SERVICE_ENV: "${pair}" is not NAME=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  // `root`: another checkout's build (bench/write-compare.ts runs older commits beside this one).
  const bin = path.join(options.root ?? ROOT, 'bin/forecourt.js');
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve'], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DB_POOL_SIZE: '10',
      ...extraEnv,
      ...env,
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
  });
  const url = `https://127.0.0.1:${port}`;
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  await waitUntil(`${url}/readyz`, dispatcher, child, log);
  const ca = readFileSync(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
  const stop = stopper(child, undefined, dispatcher);
  return {
    url,
    pid: child.pid!,
    log,
    dataDir,
    ca,
    dispatcher,
    stop: async () => {
      await stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** The HTTP limit: bench/http-limit-server.ts answering each path with a pre-serialized body. */
export function startHttpLimitServer(bodiesFile: string, tlsDir: string): Promise<Proc> {
  return startProcess({
    command: process.execPath,
    args: (port) => [
      '--import',
      'tsx',
      path.join(ROOT, 'bench/http-limit-server.ts'),
      String(port),
      bodiesFile,
      tlsDir,
    ],
    ready: '/ready',
    label: 'bench-static',
  });
}

/** A helper server on a free port (`args` gets it), ready once `ready` answers 200 over HTTPS. */
export async function startProcess(options: {
  command: string;
  args: (port: number) => string[];
  ready: string;
  label: string;
}): Promise<Proc> {
  const port = await freePort();
  const tmp = mkdtempSync(path.join(os.tmpdir(), `forecourt-${options.label}-`));
  const log = path.join(tmp, 'server.log');
  const child = spawn(options.command, options.args(port), {
    stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
  });
  const url = `https://127.0.0.1:${port}`;
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  // Registered before waiting, so a server that never gets ready is still killed on exit.
  const stop = stopper(child, tmp, dispatcher);
  await waitUntil(`${url}${options.ready}`, dispatcher, child, log);
  return { url, pid: child.pid!, log, dataDir: tmp, ca: '', dispatcher, stop };
}
