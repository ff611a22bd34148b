import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { HeldLines } from './log-stdout.js';

/** A run of dropped lines is reported at most this often. */
const REPORT_EVERY_MS = 10_000;

let dropped = 0;

/**
 * Log lines this process dropped: stdout was not taking them and the buffer was full (or a single
 * line was longer than the whole buffer), or the reader had closed stdout.
 */
export const droppedLogLines = (): number => dropped;

/**
 * The service's logger: JSON lines on stdout, or readable lines for a person at a terminal.
 *
 * stdout never makes the service wait (src/log-stdout.ts): lines are held in memory, at most
 * LOG_BUFFER_BYTES, while stdout takes nothing (a log shipper that stopped, a container runtime's
 * full log pipe); beyond that they are dropped and counted (`forecourt_log_lines_dropped_total`),
 * and once stdout has taken everything held, a warning says how many went.
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
  // answers EAGAIN at once, and the held lines wait on a timer, never on the main thread.)
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
    `${count} log line${count === 1 ? ' was' : 's were'} dropped: stdout was not taking them and LOG_BUFFER_BYTES was full (or a line was longer than all of it)`,
  );
}

/**
 * stdout's queue: one per process, whatever the number of loggers (tests boot several services in
 * one process), with one exit listener; the first logger's LOG_BUFFER_BYTES sets its size.
 */
let stdoutQueue: { held: HeldLines; report?: (count: number) => void } | undefined;

function boundedStdout(maxBytes: number, report: (count: number) => void): pino.DestinationStream {
  if (stdoutQueue) {
    stdoutQueue.report = report;
    return stdoutQueue.held;
  }
  let unreported = 0;
  let reportedAt = 0;
  let later: NodeJS.Timeout | undefined;
  const reportNow = () => {
    later = undefined;
    if (unreported === 0) return;
    const count = unreported;
    unreported = 0;
    reportedAt = Date.now();
    stdoutQueue?.report?.(count);
  };
  const held = new HeldLines(1, maxBytes, {
    dropped() {
      dropped += 1;
      unreported += 1;
    },
    // Said once stdout has taken everything held, at most every REPORT_EVERY_MS (sooner, the
    // report waits for its time); the report is itself a line, written after this call returns.
    caughtUp() {
      if (unreported === 0 || later) return;
      const wait = Math.max(0, reportedAt + REPORT_EVERY_MS - Date.now());
      later = setTimeout(reportNow, wait).unref();
    },
  });
  stdoutQueue = { held, report };
  process.on('exit', () => held.flushAtExit());
  return held;
}
