import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DbOptions, ListenHandlers, ListenStatus } from './db.js';

/*
 * LISTEN on a connection of its own (DATABASE_DIRECT_URL: a pooler in transaction mode drops
 * notifications), reconnecting with a back-off, and proving every HEARTBEAT_MS that a notification
 * the instance sends itself comes back within PROOF_MS (domain/access-cache.ts caches only then).
 */

/** How often the listening connection proves again that notifications arrive. */
const HEARTBEAT_MS = 5000;
/**
 * How long a notification the instance sends itself may take to come back. Ours arrive in a
 * millisecond or two; one that takes longer than this is as good as lost for the access cache.
 */
const PROOF_MS = 1000;
/**
 * Payloads of the proofs: every instance hears every instance's, and only its own mean anything.
 * The triggers of migration 009 send a table name, never this.
 */
const PROOF_PREFIX = 'forecourt-proof:';

/** What the Db reports of its listener (Db.listening), kept from what the listener is told. */
export function listenerState() {
  let current: ListenStatus = { live: false, detail: 'not listening yet' };
  return {
    status: () => current,
    track(handlers: ListenHandlers): ListenHandlers {
      return {
        onNotify: () => handlers.onNotify(),
        onLive(live, detail) {
          current = { live, detail };
          handlers.onLive(live, detail);
        },
      };
    },
  };
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to others), at `url`: the
 * direct one (DATABASE_DIRECT_URL) when set, since behind a transaction-mode pooler LISTEN "works"
 * but the notifications go to a server connection nobody reads. So a LISTEN that succeeds proves
 * nothing: the listener counts as live only once a notification it sent itself through the
 * service's pool (`send`, the way the triggers' notifications go) came back within PROOF_MS, and
 * it proves it again every HEARTBEAT_MS (which also finds a connection cut without a word). When
 * it breaks or a proof fails, the listener is told it is no longer live, and the connection is
 * made again, 1 s later at first, then up to every 10 s, until it proves itself again.
 */
export async function listenOn(
  url: string,
  options: DbOptions,
  channel: string,
  handlers: ListenHandlers,
  send: (payload: string) => Promise<void>,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delayMs = 1000;
  let heartbeat: NodeJS.Timeout | undefined;
  const connect = async () => {
    retry = undefined;
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      application_name: 'forecourt-listen',
      keepAlive: true,
      query_timeout: HEARTBEAT_MS,
    });
    const waiting = new Map<string, () => void>();
    let lost = false;
    const onLost = (detail: string) => {
      // Closed by us (shutdown): nothing was lost, nothing to report or retry.
      if (lost || stopped) return;
      lost = true;
      clearTimeout(heartbeat);
      if (client === next) client = undefined;
      handlers.onLive(false, detail);
      next.end().catch(() => {});
      retry = setTimeout(connect, delayMs).unref();
      delayMs = Math.min(delayMs * 2, 10_000);
    };
    /**
     * Sends a notification through the pool and waits for it here. The bound runs from when the
     * NOTIFY committed: a pool busy with requests delays the sending, which says nothing about
     * whether notifications arrive (and turning the cache off then would only add load).
     */
    const prove = async (): Promise<{ ok: true } | { ok: false; sent: boolean; why: string }> => {
      const payload = `${PROOF_PREFIX}${randomUUID()}`;
      let arrivedNow = () => {};
      const arrived = new Promise<boolean>((resolve) => {
        arrivedNow = () => resolve(true);
      });
      waiting.set(payload, () => arrivedNow());
      try {
        await send(payload);
      } catch (error) {
        waiting.delete(payload);
        const why = `sending a notification through DATABASE_URL failed (${(error as Error).message})`;
        return { ok: false, sent: false, why };
      }
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), PROOF_MS).unref();
      });
      const inTime = await Promise.race([arrived, late]);
      clearTimeout(timer);
      waiting.delete(payload);
      if (inTime) return { ok: true };
      const why = `a notification sent through DATABASE_URL did not arrive on the LISTEN connection within ${PROOF_MS} ms (behind a transaction-mode pooler, LISTEN needs DATABASE_DIRECT_URL)`;
      return { ok: false, sent: true, why };
    };
    next.on('error', (error) => onLost(`LISTEN connection lost (${error.message})`));
    next.on('end', () => onLost('LISTEN connection ended'));
    next.on('notification', (message) => {
      if (message.channel !== channel) return;
      const payload = message.payload ?? '';
      if (payload.startsWith(PROOF_PREFIX)) waiting.get(payload)?.();
      else handlers.onNotify();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      onLost(`could not LISTEN (${(error as Error).message})`);
      return;
    }
    if (stopped) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    const first = await prove();
    if (!first.ok) {
      onLost(first.why);
      return;
    }
    if (stopped || lost) return;
    delayMs = 1000;
    handlers.onLive(true, 'a notification sent through DATABASE_URL arrived on the LISTEN connection');
    // The next proof is planned when this one is over, never beside it: with the pool busy for
    // longer than HEARTBEAT_MS, proofs must not pile up as more waiters on it.
    const beat = async () => {
      const proof = await prove();
      if (proof.ok) return schedule();
      if (proof.sent) return onLost(proof.why);
      // Not sent (the pool busy or the server gone): the listening connection itself answers, or
      // it is lost (a connection cut without a word fails the query within its query_timeout).
      await next
        .query('SELECT 1')
        .then(schedule, (error: Error) => onLost(`LISTEN connection lost (${error.message})`));
    };
    const schedule = () => {
      if (stopped || lost) return;
      heartbeat = setTimeout(beat, HEARTBEAT_MS).unref();
    };
    schedule();
  };
  // Not live until the first proof succeeds (the caller starts that way): a failure then is
  // reported like any later loss.
  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    clearTimeout(heartbeat);
    await client?.end().catch(() => {});
  };
}
