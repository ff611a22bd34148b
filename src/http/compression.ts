import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import { gzipSync } from './gzip.js';

/**
 * Answers compressed as the client asks (Accept-Encoding): zstd where the runtime has it (Node.js
 * 22.15+), brotli, gzip; the client's q-values first, then that order. A page of 50 listings
 * (about 175 kB of JSON) goes out in about a tenth of its bytes (docs/benchmarks.md, "Current
 * figures").
 *
 * Levels are chosen for the service's CPU, not the last byte: brotli quality 1 and gzip level 3
 * compress such a page in well under a millisecond and keep within 10 % of what the best levels
 * save. gzip goes through ISA-L's level 1 where it was built (gzip.ts; the level above is zlib's,
 * for machines without it): about 0.3 of zlib's CPU a page.
 *
 * Answers up to 256 kB (a page of 50 listings is about 175 kB with its images' checks) are
 * compressed in one call on the event loop: 0.13 ms (brotli) to 0.28 ms (gzip) for such a page on
 * this project's machines, where the plugin's stream through zlib's thread pool cost about 0.9 ms
 * of the service's CPU a page and held list-global with gzip to 0.7 of its rate without (2 cores,
 * 2026-11-28). Larger answers (pages of 200) still go through the thread pool, so one answer's
 * compression never holds the loop for long.
 *
 * Under 1 kB nothing is compressed (a header and a frame cost more than they save). Vary names
 * Accept-Encoding on every answer, compressed or not, so no shared cache serves one client's
 * encoding to another. The ETag names the listing's version whichever encoding carries it
 * (docs/api.md#compression): If-Match compares versions, not bytes on the wire.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    encodings: ['zstd', 'br', 'gzip'],
    threshold: 1024,
    syncThreshold: 256 * 1024,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } },
    zlibOptions: { level: 3 },
    // The plugin takes a gzipSync from here for answers it compresses in one call (all up to
    // syncThreshold); everything else (brotli, zstd, streams) it takes from Node.js's zlib.
    zlib: { gzipSync },
    // Request bodies are taken as sent, uncompressed (json-body.ts refuses a Content-Encoding):
    // a decompressed body would escape what the body limit measures on the wire.
    globalDecompression: false,
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    const vary = reply.getHeader('vary');
    if (vary === undefined) reply.header('vary', 'accept-encoding');
    else if (!String(vary).toLowerCase().includes('accept-encoding'))
      reply.header('vary', `${String(vary)}, accept-encoding`);
    return payload;
  });
}
