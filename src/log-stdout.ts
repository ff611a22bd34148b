import { writeSync } from 'node:fs';

/** A full pipe is tried again after this long; the lines wait in memory meanwhile. */
const RETRY_MS = 100;
/**
 * Lines are written in chunks of whole lines of at most this many bytes (one system call each; a
 * longer line alone): a pipe takes a write of up to PIPE_BUF (4,096 bytes on Linux) whole or not
 * at all, so the processes of WORKERS=N, which share one stdout, never cut each other's lines.
 */
const CHUNK_BYTES = 4096;
/**
 * At exit the lines still held are written while stdout keeps taking them: given up once it has
 * taken nothing for EXIT_STALL_MS, and after EXIT_FLUSH_MAX_MS in all. A backlog of a few MB
 * (2,000 request lines) to a reader that takes 64 KiB every 20 ms or so needs a second or two
 * on a busy machine; 5 s still ends well within the 10 s a container runtime gives a stop.
 */
const EXIT_STALL_MS = 1_000;
const EXIT_FLUSH_MAX_MS = 5_000;

export interface HeldLinesEvents {
  /** A line was not kept: the buffer was full, or the file descriptor had failed. */
  dropped(): void;
  /** Everything held has been written. */
  caughtUp(): void;
}

/**
 * Log lines for a file descriptor (stdout) that never make the service wait for it.
 *
 * Lines are held in memory, at most `maxBytes`, and written in order by non-blocking system calls
 * (a pipe Node has opened as stdout is non-blocking: a full one answers EAGAIN at once). When the
 * reader has stopped, the writes are tried again on a timer, which does not keep the process
 * alive; a line that does not fit is dropped and reported. At exit, what is held is written for as
 * long as stdout takes it, within the bounds above. A write is either done or refused when it
 * returns, so no line is written twice or skipped, whenever the process ends.
 *
 * Why not pino's destination (sonic-boom): its buffer has no bound unless one is set, its flush at
 * exit retried a full pipe every 100 ms without end (a process whose stdout nobody read never ended
 * after SIGTERM), and that flush skips the chunk it was waiting to retry.
 */
export class HeldLines {
  readonly #fd: number;
  readonly #maxBytes: number;
  readonly #events: HeldLinesEvents;
  readonly #lines: string[] = [];
  /** The byte length of each of #lines, measured once when it was written. */
  readonly #sizes: number[] = [];
  /** The bytes of a chunk taken from #lines and not yet written whole. */
  #head: Buffer | undefined;
  /** Bytes held: #lines and #head together. */
  #bytes = 0;
  #scheduled = false;
  #retry: NodeJS.Timeout | undefined;
  #failed = false;

  constructor(fd: number, maxBytes: number, events: HeldLinesEvents) {
    this.#fd = fd;
    this.#maxBytes = maxBytes;
    this.#events = events;
  }

  /** pino's destination interface: one serialized line, newline included. */
  write(line: string): void {
    const size = Buffer.byteLength(line);
    if (this.#failed || this.#bytes + size > this.#maxBytes) {
      this.#events.dropped();
      return;
    }
    this.#lines.push(line);
    this.#sizes.push(size);
    this.#bytes += size;
    // The lines of one turn of the event loop go out together, after it.
    if (this.#scheduled || this.#retry) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#drain();
    });
  }

  /** Writes what is held while stdout takes it, within EXIT_STALL_MS and EXIT_FLUSH_MAX_MS. */
  flushAtExit(): void {
    clearTimeout(this.#retry);
    const start = Date.now();
    let progressAt = start;
    let left = this.#bytes;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (this.#writeSome() === 'full') {
      const now = Date.now();
      if (this.#bytes < left) {
        left = this.#bytes;
        progressAt = now;
      }
      if (now - progressAt >= EXIT_STALL_MS || now - start >= EXIT_FLUSH_MAX_MS) return;
      // No event loop is left at exit: a short sleep between tries.
      Atomics.wait(pause, 0, 0, 10);
    }
  }

  #drain(): void {
    const outcome = this.#writeSome();
    if (outcome === 'full') {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#drain();
      }, RETRY_MS).unref();
    } else if (outcome === 'done') {
      this.#events.caughtUp();
    }
  }

  #writeSome(): 'done' | 'full' | 'failed' {
    if (this.#failed) return 'failed';
    while (this.#head || this.#lines.length > 0) {
      this.#head ??= this.#take();
      const chunk = this.#head;
      let written: number;
      try {
        written = writeSync(this.#fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return 'full';
        this.#fail();
        return 'failed';
      }
      this.#bytes -= written;
      this.#head = written < chunk.length ? chunk.subarray(written) : undefined;
    }
    return 'done';
  }

  /** The next lines, up to CHUNK_BYTES (one line at least, whatever its length). */
  #take(): Buffer {
    let count = 0;
    let size = 0;
    while (count < this.#lines.length) {
      const next = this.#sizes[count]!;
      if (count > 0 && size + next > CHUNK_BYTES) break;
      size += next;
      count += 1;
    }
    this.#sizes.splice(0, count);
    return Buffer.from(this.#lines.splice(0, count).join(''));
  }

  /** stdout failed (its reader closed it: EPIPE, or worse): what is held and all that follows is dropped. */
  #fail(): void {
    this.#failed = true;
    let held = this.#lines.length;
    for (const byte of this.#head ?? []) if (byte === 0x0a) held += 1;
    this.#lines.length = 0;
    this.#sizes.length = 0;
    this.#head = undefined;
    this.#bytes = 0;
    for (let i = 0; i < held; i++) this.#events.dropped();
  }
}
