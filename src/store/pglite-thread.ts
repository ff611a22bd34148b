/**
 * The embedded database's thread, started by store/pglite-wire.ts: it opens PGlite in the
 * directory it is given and answers each batch of wire-protocol messages with the bytes the
 * database wrote back, one batch at a time, in the order they came. It knows nothing of
 * statements, transactions or locks (store/pglite-statements.ts, on the service's thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { ThreadReply, ThreadRequest, ThreadStart } from './pglite-wire.js';

const port = parentPort!;
const db = await open(workerData as ThreadStart);

/**
 * PGlite opened from what the service's thread handed over. The file bundle is let go of once
 * PGlite has unpacked it (about 6 MB, and the Blob's copy): nothing here keeps workerData's.
 */
async function open(start: ThreadStart) {
  const { dir, settings, module } = start;
  const fsBundle = new Blob([start.bundle]);
  (start as Partial<ThreadStart>).bundle = undefined;
  return PGlite.create(dir, {
    startParams: [...PGlite.defaultStartParams, ...settings],
    pgliteWasmModule: module,
    fsBundle,
  });
}

/** What crosses to the service's thread of an error: its name and message, as plain data. */
const describe = (error: unknown) => ({
  name: (error as Error)?.name ?? 'Error',
  message: String((error as Error)?.message ?? error),
});

async function answer(request: ThreadRequest): Promise<ThreadReply> {
  if (request.close) {
    await db.close();
    return { id: request.id, chunks: [] };
  }
  const chunks: Uint8Array[] = [];
  await db.execProtocolRawStream(request.bytes, {
    syncToFs: request.sync,
    // A view of the WebAssembly memory, which the next call reuses: copied, and the copy handed over.
    onRawData: (data: Uint8Array) => chunks.push(data.slice()),
  });
  return { id: request.id, chunks };
}

let queue = Promise.resolve();
port.on('message', (request: ThreadRequest) => {
  queue = queue.then(async () => {
    let reply: ThreadReply;
    try {
      reply = await answer(request);
    } catch (error) {
      reply = { id: request.id, error: describe(error) };
    }
    port.postMessage(
      reply,
      (reply.chunks ?? []).map((chunk) => chunk.buffer as ArrayBuffer),
    );
    if (request.close) port.close();
  });
});
port.postMessage({ id: 0, chunks: [] } satisfies ThreadReply);
