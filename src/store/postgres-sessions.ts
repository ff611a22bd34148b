import pg from 'pg';
import { labelDbError } from './errors.js';
import { CONNECTION_OPTIONS } from './postgres-statements.js';

/**
 * Whether a URL gives each client connection a session of its own (PostgreSQL itself, or a pooler
 * in session mode), as DATABASE_POOL_MODE=session promises: its prepared statements and session
 * settings are then the client's. Behind a pooler in transaction mode they are not, and the
 * service answered 500 on list pages ("prepared statement ... already exists") after starting
 * cleanly (issue 40). Proven at start instead: two connections held at once take turns (TURNS)
 * asking `pg_backend_pid()`. With a session each, each connection always sees its own backend and the two
 * differ; a transaction-mode pooler hands its idle server connection to whichever client asks, so
 * both see the same backend (or one sees several).
 */
export type SessionVerdict = { sessions: true } | { sessions: false; detail: string };

/**
 * Which connection asks, in turn: uneven on purpose. Strict turns (first, second, first...) would
 * pass a transaction-mode pooler that hands out its idle server connections in turn
 * (`server_round_robin`): each client would meet "its" server every time. Asked twice in a row,
 * a client of such a pooler meets two servers; of a LIFO one, the same server as the other client.
 */
const TURNS = [0, 0, 1, 0, 1, 1] as const;

/** The verdict on the backend pids each connection saw, statement after statement. */
export function judgeSessions(first: readonly number[], second: readonly number[]): SessionVerdict {
  for (const [which, pids] of [
    ['the first', first],
    ['the second', second],
  ] as const) {
    const seen = [...new Set(pids)];
    if (seen.length > 1)
      return {
        sessions: false,
        detail: `${which} of two connections ran its statements on ${seen.length} different server sessions (backend pids ${seen.join(', ')})`,
      };
  }
  if (first[0] === second[0])
    return {
      sessions: false,
      detail: `two connections open at once ran their statements on the same server session (backend pid ${first[0]})`,
    };
  return { sessions: true };
}

export async function proveSessions(url: string, connectTimeoutMs: number): Promise<SessionVerdict> {
  const clients = [0, 1].map(
    () =>
      new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: connectTimeoutMs,
        ...CONNECTION_OPTIONS,
      }),
  );
  try {
    const pids: [number[], number[]] = [[], []];
    for (const client of clients) {
      client.on('error', () => {});
      await client.connect();
    }
    for (const i of TURNS) {
      const { rows } = await clients[i]!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      pids[i].push(rows[0]!.pid);
    }
    return judgeSessions(...pids);
  } catch (error) {
    throw labelDbError(error, 'ProveSessions');
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
  }
}
