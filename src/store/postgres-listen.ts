import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DbOptions, Listening, ListenStatus } from './db.js';

/*
 * LISTEN on a connection of its own (DATABASE_DIRECT_URL: a pooler in transaction mode drops
 * notifications), proven by a notification the instance sends itself coming back within PROOF_MS
 * (domain/access-cache.ts caches only then). How often it is proven again, and when a lost one is
 * made again, is background/listen.ts's.
 */

/**
 * How long a notification the instance sends itself may take to come back. Ours arrive in a
 * millisecond or two; one that takes longer than this is as good as lost for the access cache.
 */
const PROOF_MS = 1000;
/**
 * Bounds each statement of the listening connection, so a connection cut without a word fails its
 * next statement rather than hanging (background/listen.ts proves it every 5 s).
 */
const QUERY_TIMEOUT_MS = 5000;
/**
 * Payloads of the proofs: every instance hears every instance's, and only its own mean anything.
 * The triggers of migration 009 send a table name, never this.
 */
const PROOF_PREFIX = 'forecourt-proof:';
/** What a successful proof says (the listener's detail in /readyz). */
export const PROVEN = 'a notification sent through DATABASE_URL arrived on the LISTEN connection';

/** What the Db reports of its listener (Db.listening): kept from what its connections do. */
export function listenerState() {
  let current: ListenStatus = { live: false, detail: 'not listening yet' };
  return {
    status: () => current,
    set(live: boolean, detail: string): void {
      current = { live, detail };
    },
  };
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to others), at `url`: the
 * direct one (DATABASE_DIRECT_URL) when set, since behind a transaction-mode pooler LISTEN "works"
 * but the notifications go to a server connection nobody reads. So a LISTEN that succeeds proves
 * nothing: the connection is only handed over once a notification it sent itself through the
 * service's pool (`send`, the way the triggers' notifications go) came back within PROOF_MS;
 * otherwise this rejects, saying why. Later, `onLost` says once that the connection broke, unless
 * closed by `close()` or by a failed `prove()` (which rejects instead).
 */
export async function openListen(
  url: string,
  options: Pick<DbOptions, 'connectTimeoutMs'>,
  channel: string,
  events: { onNotify(): void; onLost(detail: string): void },
  send: (payload: string) => Promise<void>,
): Promise<Listening> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs,
    application_name: 'forecourt-listen',
    keepAlive: true,
    query_timeout: QUERY_TIMEOUT_MS,
  });
  const waiting = new Map<string, () => void>();
  /** Handed over: a loss is told to `onLost` from then on. */
  let open = false;
  /** Lost, or ended by us: nothing more is told. */
  let over = false;
  const end = () => {
    over = true;
    return client.end().catch(() => {});
  };
  const onLost = (detail: string) => {
    if (over) return;
    void end();
    if (open) events.onLost(detail);
  };
  client.on('error', (error) => onLost(`LISTEN connection lost (${error.message})`));
  client.on('end', () => onLost('LISTEN connection ended'));
  client.on('notification', (message) => {
    if (message.channel !== channel) return;
    const payload = message.payload ?? '';
    if (payload.startsWith(PROOF_PREFIX)) waiting.get(payload)?.();
    else events.onNotify();
  });

  /**
   * Sends a notification through the pool and waits for it here. The bound runs from when the
   * NOTIFY committed: a pool busy with requests delays the sending, which says nothing about
   * whether notifications arrive (and turning the cache off then would only add load).
   */
  const proof = async (): Promise<{ ok: true } | { ok: false; sent: boolean; why: string }> => {
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
  /** Ends the connection (nothing more is told) and rejects with `why`. */
  const fail = async (why: string): Promise<never> => {
    await end();
    throw new Error(why);
  };

  try {
    await client.connect();
    await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
  } catch (error) {
    return fail(`could not LISTEN (${(error as Error).message})`);
  }
  const first = await proof();
  if (!first.ok) return fail(first.why);
  if (over) throw new Error('LISTEN connection lost while it was proven');
  open = true;
  return {
    async prove() {
      if (over) throw new Error('LISTEN connection closed');
      const again = await proof();
      if (again.ok) return;
      if (again.sent) return fail(again.why);
      // Not sent (the pool busy or the server gone): the listening connection itself answers, or
      // it is lost (a connection cut without a word fails the query within its query_timeout).
      await client
        .query('SELECT 1')
        .catch((error: Error) => fail(`LISTEN connection lost (${error.message})`));
    },
    async close() {
      await end();
    },
  };
}
