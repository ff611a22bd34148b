import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import { Agent } from 'undici';
import type { Reply } from './app.js';
import { baseEnv } from './base-env.js';
import { type HttpsCallOptions, httpsCall } from './https-call.js';
import { seedEmbeddedDb } from './pglite-template.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/forecourt.js');

/** A `forecourt serve` process that has started listening. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Trusts the certificate the process generated in its data directory. */
  dispatcher: Agent;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** What the process wrote to stderr so far (a crash's stack). */
  stderr(): string;
  /** SIGKILL: no shutdown code runs. Resolves once the process is gone and the dispatcher closed. */
  kill(): Promise<void>;
}

/**
 * Runs `forecourt serve` on `dataDir`, as an operator would, and waits until it listens. Logs are
 * JSON lines (stdout is not a terminal); each one is handed to `onLine`, and the URL comes from the
 * "listening" line.
 */
export async function startServe(
  dataDir: string,
  env: Record<string, string>,
  onLine: (line: string) => void = () => {},
): Promise<ServeProcess> {
  // A new embedded database is a copy of the tests' template (0.2 s), not an initdb (4.5 s, and
  // over 20 s when cores are busy): what a restarted service finds, as in bootApp.
  if (!env.DATABASE_URL && !existsSync(path.join(dataDir, 'pglite'))) await seedEmbeddedDb(dataDir);
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...baseEnv(),
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // As in bootApp: no image checks unless a test asks (a result moves listings' sync position).
      IMAGE_CHECK_CONCURRENCY: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const listening = new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
        // One line per request: parse only the one that matters here.
        if (line.includes('"Forecourt is listening"')) resolve(String(JSON.parse(line).url));
        onLine(line);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    void exited.then((code) =>
      reject(new Error(`forecourt serve exited (${code}) before listening:\n${stderr}`)),
    );
    setTimeout(
      () => reject(new Error(`forecourt serve did not listen within 60 s:\n${stderr}`)),
      60_000,
    ).unref();
  });
  let url: string;
  try {
    url = (await listening).replace('localhost', '127.0.0.1');
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const ca = readFileSync(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
  const dispatcher = new Agent({
    connect: { secureContext: createSecureContext({ ca }), servername: 'localhost' },
  });
  return {
    child,
    url,
    dispatcher,
    exited,
    stderr: () => stderr,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await dispatcher.destroy().catch(() => {});
    },
  };
}

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  port: number;
  dataDir: string;
  dispatcher: Agent;
  /** Every JSON log line the process wrote so far. */
  logs: Record<string, unknown>[];
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** Calls the process over HTTPS, trusting its generated certificate; JSON body when given. */
  call(method: string, path: string, options?: HttpsCallOptions): Promise<Reply>;
  /** Kills the process and removes its data directory. */
  stop(): Promise<void>;
}

/** `forecourt serve` on a fresh data directory of its own, every log line kept as parsed JSON. */
export async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-proc-'));
  const logs: Record<string, unknown>[] = [];
  const serve = await startServe(dataDir, env, (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }).catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    child: serve.child,
    url: serve.url,
    port: Number(new URL(serve.url).port),
    dataDir,
    dispatcher: serve.dispatcher,
    logs,
    exited: serve.exited,
    call: (method, urlPath, options = {}) => httpsCall(serve.url, serve.dispatcher, method, urlPath, options),
    async stop() {
      await serve.kill();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
