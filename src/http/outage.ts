import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { DbError } from '../store/errors.js';

/** How often a database that went away is asked whether it is back. */
const PROBE_MS = 1_000;

/**
 * What the log says of requests answered 503 because the database could not do the work: one
 * line when it goes away and one when it is back, with the count of requests refused between,
 * not a line with a stack per request (a 20 s outage once wrote 4,248 stack traces in 25 s:
 * issue 40). A refusal while the database is thought up asks it at once, on a connection of its
 * own (`reachable`: through the pool, a busy pool would look like an outage): if it answers,
 * the refusal was a slow statement or a busy pool, not an outage, and one warning says how many
 * requests that episode refused; if not, the outage starts and it is asked every second until
 * every database answers.
 */
export function databaseOutages(databases: readonly Pick<Db, 'reachable'>[], logger: Logger) {
  let state: 'up' | 'checking' | 'down' = 'up';
  let refused = 0;
  let since = 0;
  let firstCause = '';
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const answers = async (): Promise<string | null> => {
    try {
      await Promise.all(databases.map((db) => db.reachable()));
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  async function check(): Promise<void> {
    const why = await answers();
    if (closed) return;
    if (why === null) {
      logger.warn(
        { refused, cause: firstCause },
        `the database refused ${refused} request${refused === 1 ? '' : 's'} (503) but answers: ${firstCause}`,
      );
      state = 'up';
      return;
    }
    state = 'down';
    logger.error(
      { cause: firstCause, probe: why },
      'the database went away: requests that need it are answered 503 until it is back',
    );
    timer = setTimeout(probe, PROBE_MS);
  }

  async function probe(): Promise<void> {
    timer = undefined;
    if (closed) return;
    if ((await answers()) !== null) {
      if (!closed) timer = setTimeout(probe, PROBE_MS);
      return;
    }
    if (closed) return;
    const downS = Math.round((Date.now() - since) / 100) / 10;
    logger.warn(
      { refused, downS },
      `the database is back after ${downS} s; ${refused} request${refused === 1 ? '' : 's'} refused (503) meanwhile`,
    );
    state = 'up';
  }

  return {
    /** A request answered 503 because of `error` (DbError.unavailable). */
    refused(error: DbError): void {
      if (closed) return;
      if (state === 'up') {
        state = 'checking';
        refused = 0;
        since = Date.now();
        firstCause = error.message;
        void check();
      }
      refused++;
    },
    close(): void {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
}

export type DatabaseOutages = ReturnType<typeof databaseOutages>;
