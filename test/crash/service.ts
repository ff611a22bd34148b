import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import type { Reply } from '../helpers/app.js';
import { httpsCall } from '../helpers/https-call.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/forecourt.js');

/**
 * `forecourt serve` as a child process on a data directory that outlives it: the crash tests kill
 * it with SIGKILL and start a new one on the same data. (test/helpers/service-process.ts makes a
 * fresh directory per process and removes it.)
 */
export interface CrashService {
  child: ChildProcess;
  url: string;
  /** Resolves once the process has ended, with its exit code or signal. */
  exited: Promise<number | string>;
  /** Log lines at level error or above (5xx stacks), kept for the failure message. */
  errors: string[];
  /** What the process wrote to stderr (a crash's stack). */
  stderr(): string;
  /** A call over HTTPS trusting the generated certificate; every partner-API reply is contract-checked. */
  call(
    method: string,
    urlPath: string,
    options?: { bearer?: string; body?: unknown; signal?: AbortSignal },
  ): Promise<Reply>;
  /** SIGKILL: no shutdown code runs, no buffer is flushed. Resolves once the process is gone. */
  kill(): Promise<void>;
}

export async function startService(dataDir: string, env: Record<string, string>): Promise<CrashService> {
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
  const errors: string[] = [];
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
        // One line per request: parse only the few that matter.
        if (line.includes('"Forecourt is listening"')) resolve(String(JSON.parse(line).url));
        else if (/"level":(50|60)/.test(line) && errors.length < 50) errors.push(line.slice(0, 3000));
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
  const dispatcher = new Agent({ connect: { ca, servername: 'localhost' } });
  return {
    child,
    url,
    exited,
    errors,
    stderr: () => stderr,
    call: (method, urlPath, options = {}) =>
      httpsCall(url, dispatcher, method, urlPath, {
        ...options,
        headers: options.bearer ? { authorization: `Bearer ${options.bearer}` } : {},
      }),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await dispatcher.destroy().catch(() => {});
    },
  };
}
