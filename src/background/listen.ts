import type { Db, Listening } from '../store/db.js';
import { type Loop, type LoopTuning, loop } from './loop.js';

/** How often the listening connection proves again that notifications arrive. */
export const HEARTBEAT_MS = 5000;
/** After a loss or a failed attempt: listening again 1 s later at first, then up to every 10 s. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 10_000;

/** What the listener tells whoever relies on notifications (the access cache, runtime.ts). */
export interface ListenHandlers {
  /** A notification arrived (after the transaction that sent it committed). */
  onNotify(): void;
  /**
   * false: notifications may be missed from now on (the listening connection is gone, or a
   * notification the instance sent itself did not come back in time); true: proven to arrive
   * (again). Whoever relies on notifications trusts nothing it kept while not live. `detail`
   * says why, for the log.
   */
  onLive(live: boolean, detail: string): void;
}

/**
 * Keeps a LISTEN on `channel` (the database's side: store/postgres-listen.ts). A pass listens when
 * nobody does, else proves again that notifications arrive (which also finds a connection cut
 * without a word), one pass every HEARTBEAT_MS, never two side by side: with the pool busy for
 * longer than that, proofs must not pile up as more waiters on it. A failed attempt or proof, or
 * a connection lost between passes, tells the handlers that notifications may be missed, and the
 * loop backs off before listening again. The first pass is over when start() resolves: live or
 * not (the access cache starts not live).
 */
export function listenLoop(
  db: Pick<Db, 'listen' | 'listening'>,
  channel: string,
  handlers: ListenHandlers,
  tuning: LoopTuning = {},
): Loop {
  let current: Listening | undefined;
  let passing = false;
  /** A loss heard during a pass or since the last one: the next end of a pass fails with it. */
  let lost: string | undefined;

  /** Not listening any more: said once per connection. */
  function drop(connection: Listening, detail: string): void {
    if (connection !== current) return;
    current = undefined;
    handlers.onLive(false, detail);
  }

  async function listen(): Promise<void> {
    let connection: Listening | undefined;
    try {
      connection = await db.listen(channel, {
        onNotify: () => handlers.onNotify(),
        onLost(detail) {
          if (connection !== current) return;
          drop(connection!, detail);
          lost = detail;
          // Between passes: now, so the loss counts as the loop's failure and its back-off runs.
          if (!passing) void listening.wake();
        },
      });
    } catch (error) {
      handlers.onLive(false, (error as Error).message);
      throw error;
    }
    current = connection;
    handlers.onLive(true, db.listening().detail);
  }

  async function proveAgain(connection: Listening): Promise<void> {
    try {
      await connection.prove();
    } catch (error) {
      drop(connection, (error as Error).message);
      throw error;
    }
  }

  const listening = loop({
    name: 'listen',
    everyMs: HEARTBEAT_MS,
    backoff: { firstMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS },
    async pass() {
      passing = true;
      try {
        if (lost === undefined) await (current ? proveAgain(current) : listen());
        if (lost !== undefined) throw new Error(lost);
      } finally {
        // A failure of this pass accounts for a loss heard meanwhile.
        lost = undefined;
        passing = false;
      }
    },
    async afterLast() {
      const connection = current;
      current = undefined;
      await connection?.close();
    },
    ...tuning,
  });
  return listening;
}
