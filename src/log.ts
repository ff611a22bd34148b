import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

/**
 * How long the last lines may hold up the exit when stdout takes nothing: the process ends anyway
 * and those lines are lost (they are counted, but nobody is left to read the count).
 */
const EXIT_FLUSH_MS = 1_000;

let dropped = 0;

/** Log lines this process dropped because stdout was not taking them (its buffer was full). */
export const droppedLogLines = (): number => dropped;

/**
 * The service's logger: JSON lines on stdout, or readable lines for a person at a terminal.
 *
 * stdout is written asynchronously into a buffer of at most LOG_BUFFER_BYTES. pino's default
 * destination is asynchronous too, but its buffer had no bound: while nobody read stdout (a log
 * shipper that stopped, a container runtime's full log pipe) memory grew with every line, and at
 * exit its synchronous flush retried the full pipe every 100 ms without end, so the process never
 * ended after SIGTERM. Now a full buffer drops new lines, counts them
 * (`forecourt_log_lines_dropped_total`) and, once stdout takes lines again, says how many went; the
 * flush at exit gives up after EXIT_FLUSH_MS.
 */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL' | 'LOG_BUFFER_BYTES'>,
  destination?: NodeJS.WritableStream,
): Logger {
  const options = {
    level: config.LOG_LEVEL,
    // Secrets must never reach a log line, whatever a future log call passes in.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.secret', 'secret'],
      censor: '[redacted]',
    },
  };
  if (destination) return pino(options, destination as pino.DestinationStream);
  // Readable lines for a person at a terminal; JSON for everything else (log collectors).
  // (Reading isTTY also opens stdout as Node does, which makes a pipe non-blocking: a full pipe
  // answers EAGAIN and the writes below wait on a timer, never on the main thread.)
  if (process.stdout.isTTY)
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } },
    });
  const logger = pino(
    options,
    boundedStdout(config.LOG_BUFFER_BYTES, (count) => reportDrops(logger, count)),
  );
  return logger;
}

function reportDrops(logger: Logger, count: number): void {
  logger.warn(
    { droppedLines: count, droppedTotal: dropped },
    `${count} log line${count === 1 ? ' was' : 's were'} dropped while stdout was not taking them (LOG_BUFFER_BYTES was full)`,
  );
}

function boundedStdout(maxBytes: number, onRecovered: (count: number) => void): pino.DestinationStream {
  // Set by our 'exit' listener, which runs before pino's (it is registered first): from then on a
  // full pipe is retried for EXIT_FLUSH_MS at most.
  let exitingAt: number | undefined;
  process.once('exit', () => {
    exitingAt = Date.now();
  });
  const stream = pino.destination({
    dest: 1,
    sync: false,
    maxLength: maxBytes,
    retryEAGAIN: () => exitingAt === undefined || Date.now() - exitingAt < EXIT_FLUSH_MS,
  });
  let unreported = 0;
  stream.on('drop', () => {
    dropped += 1;
    unreported += 1;
  });
  // A write went through: stdout is taking lines again. Said once per run of drops, after the
  // write that brought the news (a line written from inside the stream's own event would be
  // counted in the middle of its bookkeeping).
  stream.on('write', () => {
    if (unreported === 0) return;
    const count = unreported;
    unreported = 0;
    setImmediate(() => onRecovered(count));
  });
  // pino flushes synchronously at exit; when stdout still takes nothing after EXIT_FLUSH_MS, that
  // flush throws, and the exit must go on rather than end in an error from an 'exit' listener.
  const flushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    try {
      flushSync();
    } catch {
      // The remaining lines are lost with the process.
    }
  };
  return stream;
}
