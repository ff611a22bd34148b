import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';

/**
 * How the service reaches the embedded database: a batch of wire-protocol messages in, the bytes
 * the database answered out. store/pglite-statements.ts builds the batches and reads the answers;
 * this only carries them.
 *
 * The service runs PGlite on a thread of its own (store/pglite-thread.ts): the database's
 * WebAssembly, more than half of a list page's CPU, then runs beside the service's own work
 * (TLS, HTTP, validation) on the other core instead of in turn with it, and a long statement (a
 * vacuum, a large bulk) holds only the requests that need the database: /healthz, refusals and
 * rate limits are answered meanwhile (docs/benchmarks.md, "The embedded database on a thread of
 * its own"). Creating a database keeps it in its own process
 * (store/pglite-create.ts), on the thread that runs it.
 */
export interface Wire {
  /** Sends `bytes` (whole messages, ending in a Sync or a Query); `sync` writes to disk after. */
  send(bytes: Buffer, sync: boolean): Promise<Buffer[]>;
  close(): Promise<void>;
}

export interface ThreadStart {
  dir: string;
  /** Start parameters after PGlite's own (`-c name=value`). */
  settings: string[];
  /** PGlite's WebAssembly, compiled once per process (shared with every thread, not copied). */
  module: WebAssembly.Module;
  /** PGlite's file-system bundle (its share/ files), moved to the thread. */
  bundle: ArrayBuffer;
}

let compiled: Promise<WebAssembly.Module> | undefined;

const dist = () => path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));

/**
 * PGlite's WebAssembly compiled once per process. A thread left to compile it itself compiles it
 * again, and V8 optimises again every function it had already optimised in another thread: about
 * 2.4 s of CPU to open a database against 0.8 for a thread given it (0.6 in the service's own
 * thread), which a test suite pays at each of its ~150 boots. A failed compile is not kept: the
 * next open tries again.
 */
function compileModule() {
  compiled ??= readFile(path.join(dist(), 'pglite.wasm'))
    .then((wasm) => WebAssembly.compile(wasm))
    .catch((error: unknown) => {
      compiled = undefined;
      throw error;
    });
  return compiled;
}

/**
 * PGlite's file-system bundle (its share/ files, about 6 MB), read for each thread and moved to
 * it rather than copied. Kept here, the process would hold for its whole life 6 MB that nothing
 * reads after the thread has unpacked them, to save a read of a few milliseconds per open.
 */
async function readBundle(): Promise<ArrayBuffer> {
  const bytes = await readFile(path.join(dist(), 'pglite.data'));
  // A file this large is read into an ArrayBuffer of its own, never a slice of Node's pool.
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

/**
 * The thread's young generation, capped. Left at V8's default it grew to tens of megabytes while
 * the thread carried the answers of a service's start, and stayed resident: idle RSS on 100,000
 * listings was 357 to 368 MB against 299 to 337 with this cap, the same runs' list pages, single
 * PUTs and bulks as fast or faster (bench/results/2026-11-30-embedded-rss.txt). What the thread
 * allocates per statement is small and short-lived; the answers' bytes live outside its heap.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4 };

export type ThreadRequest = { id: number } & (
  | { bytes: Uint8Array; sync: boolean; close?: never }
  | { close: true }
);
export interface ThreadReply {
  id: number;
  chunks?: Uint8Array[];
  error?: { name: string; message: string };
}

/** PGlite in this thread: for the child process that creates a database, and nothing else. */
export function inProcessWire(db: PGlite): Wire {
  return {
    async send(bytes, sync) {
      const chunks: Buffer[] = [];
      await db.execProtocolRawStream(bytes, {
        syncToFs: sync,
        onRawData: (data: Uint8Array) => chunks.push(Buffer.from(data)),
      });
      return chunks;
    },
    close: () => db.close(),
  };
}

/**
 * Opens PGlite in `dir` on a thread of its own. Rejects with why it could not open. Once the
 * thread has stopped (an abort in the database's WebAssembly, say), every statement then waiting
 * and every later one is refused, saying so: nothing waits for an answer that cannot come.
 */
export async function threadWire(dir: string, settings: string[]): Promise<Wire> {
  const [module, bundle] = await Promise.all([compileModule(), readBundle()]);
  const workerData = { dir, settings, module, bundle } satisfies ThreadStart;
  const extension = path.extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./pglite-thread${extension}`, import.meta.url);
  // Run from the sources (tsx), a thread does not inherit the loader that reads TypeScript: it
  // registers it first (node 20), found from here rather than from the working directory.
  const options = { workerData, transferList: [bundle], resourceLimits: THREAD_LIMITS };
  const worker =
    extension === '.ts'
      ? new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
          { ...options, eval: true },
        )
      : new Worker(entry, options);
  const waiting = new Map<number, { resolve: (chunks: Buffer[]) => void; reject: (error: Error) => void }>();
  let stopped: Error | undefined;
  let next = 1;
  const stop = (error: Error) => {
    stopped ??= error;
    for (const { reject } of waiting.values()) reject(stopped);
    waiting.clear();
    worker.unref();
  };
  worker.on('error', (error) => stop(new Error(`The embedded database stopped: ${error.message}`)));
  worker.on('exit', (code) =>
    stop(new Error(`The embedded database stopped (its thread exited with ${code})`)),
  );
  worker.on('message', (reply: ThreadReply) => {
    const call = waiting.get(reply.id);
    if (!call) return;
    waiting.delete(reply.id);
    // A thread that is waited on keeps the process alive; an idle one does not (as PGlite in this
    // thread did not), so a command that forgets to close still ends.
    if (waiting.size === 0) worker.unref();
    if (reply.error) {
      const error = new Error(reply.error.message);
      error.name = reply.error.name;
      call.reject(error);
    } else call.resolve((reply.chunks ?? []).map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
  });
  const call = (request: { bytes: Uint8Array; sync: boolean } | { close: true }) =>
    new Promise<Buffer[]>((resolve, reject) => {
      if (stopped) return reject(stopped);
      const id = next++;
      waiting.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  // The thread answers the id 0, unasked, once PGlite has opened (or fails, and `stop` says why).
  await new Promise<unknown>((resolve, reject) => waiting.set(0, { resolve, reject }));
  return {
    send: (bytes, sync) => call({ bytes, sync }),
    async close() {
      try {
        if (!stopped) await call({ close: true });
      } finally {
        // Even when PGlite's close failed: the directory's lock is released next, so nothing of
        // this database may go on running.
        stop(new Error('The embedded database is closed'));
        await worker.terminate();
      }
    },
  };
}
