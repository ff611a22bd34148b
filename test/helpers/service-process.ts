import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import type { Reply } from './app.js';
import { httpsCall } from './https-call.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/forecourt.js');

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
  call(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<Reply>;
  stop(): Promise<void>;
}

/**
 * Runs `forecourt serve` as its own process, as an operator would, and waits until it listens.
 * Logs are JSON (stdout is not a terminal); the port comes from its "listening" line.
 */
export async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-proc-'));
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
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
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (entry.msg === 'Forecourt is listening') resolve(String(entry.url));
        } catch {
          // not a log line
        }
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
  const url = (await listening).replace('localhost', '127.0.0.1');
  const ca = readFileSync(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
  const dispatcher = new Agent({ connect: { ca, servername: 'localhost' } });
  return {
    child,
    url,
    port: Number(new URL(url).port),
    dataDir,
    dispatcher,
    logs,
    exited,
    call: (method, urlPath, options = {}) => httpsCall(url, dispatcher, method, urlPath, options),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await dispatcher.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
