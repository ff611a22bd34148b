import { createRequire } from 'node:module';
import zlib from 'node:zlib';

/**
 * gzip for answers: Intel's ISA-L (native/igzip, built at install where libisal-dev is present)
 * or, without it, Node.js's zlib. Both write RFC 1952 gzip that every client reads; ISA-L's level
 * 1 takes about 0.3 of zlib's CPU for a page of 50 listings, at about the same size
 * (bench/results/2026-11-30-igzip.txt), which is what kept list pages with gzip below 0.9 of their
 * rate without it.
 *
 * ISA-L is an optional dependency: an install without the library (or with `--omit=optional`)
 * skips it and answers are compressed by zlib, as before. The service says which at start, and
 * why not ISA-L. Answers over the plugin's syncThreshold (256 kB) go through zlib's stream.
 */

interface Native {
  gzip(input: Uint8Array): Buffer | null;
}

function loadNative(): { native?: Native; why?: string } {
  try {
    return { native: createRequire(import.meta.url)('@forecourt/igzip') as Native };
  } catch (error) {
    return { why: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

const { native, why } = loadNative();

/** Which library compresses gzip answers in this process, for the start-up log. */
export const gzipEngine: 'isa-l' | 'zlib' = native ? 'isa-l' : 'zlib';
/** Why ISA-L is not used (the module's load error: not built, or its library missing). */
export const gzipEngineNote: string | undefined = why;

/**
 * A buffer's gzip: ISA-L's when built, else zlib's at `options`. ISA-L answers null only when it
 * could not finish (its output bound, or memory): that call goes to zlib instead, never fails.
 */
export function gzipSync(input: Uint8Array, options?: zlib.ZlibOptions): Buffer {
  return native?.gzip(input) ?? zlib.gzipSync(input, options);
}
