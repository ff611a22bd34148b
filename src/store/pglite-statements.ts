import { type PGlite, parse, protocol, type Transaction } from '@electric-sql/pglite';
import type { Queryable } from './db.js';
import { labelDbError } from './errors.js';
import { prepareValue } from './postgres-statements.js';

/*
 * How the service's statements reach the embedded database: each one as a single batch of wire
 * protocol messages (Parse, Bind, Describe, Execute, Sync), one call into the database's
 * WebAssembly. PGlite's own `query` sends them as six calls (a Describe of the statement added, to
 * learn its parameters' types), each a trip through its protocol loop: a statement that does
 * nothing took 85 µs that way and 46 µs as one batch (docs/benchmarks.md). Parameters are then
 * serialized without their types, as node-postgres does it for PostgreSQL (pg's prepareValue), so
 * both databases receive the very same text for a value.
 *
 * Nothing is prepared by name here, unlike on PostgreSQL: a prepared page saved no measurable
 * time (its text is short since the read model, and it is planned for its values on every run),
 * and planning prepared statements for their values (plan_cache_mode) also re-plans every
 * statement of the triggers' PL/pgSQL, which made a bulk write of 100 a fifth slower.
 */

type Exclusive = <T>(fn: () => Promise<T>) => Promise<T>;

/** PGlite's two locks, which its own query() and transaction() take; internal, but public members. */
interface Locks {
  _runExclusiveQuery: Exclusive;
  _runExclusiveTransaction: Exclusive;
  _checkReady(): Promise<void>;
  parsers: Parameters<typeof parse.parseResults>[1];
}

const concat = (parts: readonly Uint8Array[]): Uint8Array => {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
};

/**
 * The statements of one PGlite instance. Inside a transaction (`inTransaction`: within
 * db.transaction, which holds PGlite's transaction lock) only the query lock is taken, and nothing
 * is synced to the file system before the transaction ends (PGlite's query() does the same).
 */
export function pgliteStatements(db: PGlite) {
  const locks = db as unknown as Locks;

  async function run(sql: string, params: readonly unknown[], inTransaction: boolean) {
    // A string, null, or a Buffer (bytea), which the Bind message sends in binary format.
    const values = params.map((value) => prepareValue(value) as string | Buffer | null);
    const message = concat([
      protocol.serialize.parse({ text: sql, types: [] }),
      protocol.serialize.bind({ values }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    ]);
    // After an error, PostgreSQL skips to the Sync; PGlite throws the first error it read.
    const messages = await locks._runExclusiveQuery(async () => {
      // Checked once the lock is held: a statement that waited behind close() must not reach the
      // closed database's module ("PGlite is closed" instead).
      await locks._checkReady();
      return db.execProtocolStream(message, { syncToFs: !inTransaction });
    });
    return parse.parseResults(messages, locks.parsers)[0]?.rows ?? [];
  }

  /**
   * A Queryable over these statements, on the database (`tx` absent) or inside one of PGlite's
   * transactions; `exec` (migrations' scripts) stays PGlite's own. A transaction's handle used
   * after its transaction ended is refused as PGlite refuses it: it holds no lock any more, and
   * its statement could otherwise run inside another caller's transaction.
   */
  return function queryable(tx?: Transaction): Queryable {
    const target: Pick<PGlite, 'exec'> = tx ?? db;
    return {
      async query<T>(name: string, sql: string, params: readonly unknown[] = []) {
        try {
          if (tx?.closed) throw new Error('Transaction is closed');
          const rows = tx
            ? await run(sql, params, true)
            : await locks._runExclusiveTransaction(() => run(sql, params, false));
          return rows as T[];
        } catch (error) {
          throw labelDbError(error, name);
        }
      },
      async exec(name: string, sql: string) {
        try {
          await target.exec(sql);
        } catch (error) {
          throw labelDbError(error, name);
        }
      },
    };
  };
}
