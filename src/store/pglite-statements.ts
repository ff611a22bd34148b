import { type PGlite, type Transaction, types } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';
import type {
  BackendMessage,
  DataRowMessage,
  NotificationResponseMessage,
  RowDescriptionMessage,
} from 'pg-protocol/dist/messages.js';
import { Parser } from 'pg-protocol/dist/parser.js';
import type { Queryable } from './db.js';
import { labelDbError } from './errors.js';
import { PREPARED_WRITES, prepareValue } from './postgres-statements.js';

/*
 * How the service's statements reach the embedded database: each one as a single batch of wire
 * protocol messages (Parse, Bind, Describe, Execute, Sync), one call into the database's
 * WebAssembly. PGlite's own `query` sends them as six calls (a Describe of the statement added, to
 * learn its parameters' types), each a trip through its protocol loop: a statement that does
 * nothing took 85 µs that way and 46 µs as one batch (docs/benchmarks.md). Parameters are then
 * serialized without their types, as node-postgres does it for PostgreSQL (pg's prepareValue), so
 * both databases receive the very same text for a value.
 *
 * The messages are written and the answer read by node-postgres' own protocol code (pg-protocol),
 * not PGlite's: PGlite's parser copies every chunk of an answer and then every field again before
 * decoding it, and its serializer measures each string's UTF-8 length in JavaScript; pg-protocol
 * decodes a field straight from the buffer and lets Buffer measure. The answer is copied once out
 * of the WebAssembly memory, which the next call reuses. Notifications in an answer read here are
 * handed to `notify` (store/pglite.ts): PGlite's listeners hear only what its own parser reads.
 *
 * Only a listing write's statements are prepared by name here (PREPARED_WRITES: parsed once, and
 * planned generically once PostgreSQL finds that as good, plan_cache_mode being left at its
 * default): their texts are several kilobytes. A prepared page saved no measurable time (its text
 * is short since the read model, and it is planned for its values on every run), and planning
 * prepared statements for their values (plan_cache_mode) also re-plans every statement of the
 * triggers' PL/pgSQL, which made a bulk write of 100 a fifth slower.
 */

type Exclusive = <T>(fn: () => Promise<T>) => Promise<T>;

/** PGlite's two locks, which its own query() and transaction() take; internal, but public members. */
interface Locks {
  _runExclusiveQuery: Exclusive;
  _runExclusiveTransaction: Exclusive;
  _checkReady(): Promise<void>;
  parsers: Parameters<typeof types.parseType>[2];
}

/**
 * Reads one answer: its rows as objects, each value through PGlite's type parsers (as its query()
 * does). `parsed` is told when a Parse succeeded (a named statement now exists).
 */
function readAnswer(
  chunks: readonly Buffer[],
  parsers: Locks['parsers'],
  notify: (channel: string) => void,
  parsed: () => void = () => {},
): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  let names: string[] = [];
  let parse: ((value: string) => unknown)[] = [];
  let error: Error | undefined;
  const parser = new Parser();
  const onMessage = (message: BackendMessage) => {
    switch (message.name) {
      case 'rowDescription': {
        const { fields } = message as RowDescriptionMessage;
        names = fields.map((f) => f.name);
        parse = fields.map((f) => (value: string) => types.parseType(value, f.dataTypeID, parsers));
        break;
      }
      case 'dataRow': {
        const { fields } = message as DataRowMessage;
        const row: Record<string, unknown> = {};
        for (let i = 0; i < fields.length; i++) {
          const value = fields[i] as string | null;
          row[names[i]!] = value === null ? null : parse[i]!(value);
        }
        rows.push(row);
        break;
      }
      case 'notification':
        notify((message as NotificationResponseMessage).channel);
        break;
      case 'parseComplete':
        parsed();
        break;
      case 'error':
        // After an error PostgreSQL skips to the Sync; the first error is the answer.
        error ??= message as unknown as Error;
        break;
    }
  };
  for (const chunk of chunks) parser.parse(chunk, onMessage);
  if (error) throw error;
  return rows;
}

/**
 * The statements of one PGlite instance. Inside a transaction (`inTransaction`: within
 * db.transaction, which holds PGlite's transaction lock) only the query lock is taken, and nothing
 * is synced to the file system before the transaction ends (PGlite's query() does the same).
 */
export function pgliteStatements(db: PGlite, notify: (channel: string) => void) {
  const locks = db as unknown as Locks;
  // A listing write's statements (PREPARED_WRITES), by text: their names, and those parsed already.
  const names = new Map<string, string>();
  const parsed = new Set<string>();

  async function run(name: string, sql: string, params: readonly unknown[], inTransaction: boolean) {
    // A string, null, or a Buffer (bytea), which the Bind message sends in binary format.
    const values = params.map((value) => prepareValue(value) as string | Buffer | null);
    let statement = '';
    if (PREPARED_WRITES.has(name)) {
      statement = names.get(sql) ?? `${name}_${names.size}`;
      names.set(sql, statement);
    }
    const message = Buffer.concat([
      ...(statement && parsed.has(statement)
        ? []
        : [serialize.parse({ name: statement, text: sql, types: [] })]),
      serialize.bind({ statement, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ]);
    const chunks: Buffer[] = [];
    await locks._runExclusiveQuery(async () => {
      // Checked once the lock is held: a statement that waited behind close() must not reach the
      // closed database's module ("PGlite is closed" instead).
      await locks._checkReady();
      await db.execProtocolRawStream(message, {
        syncToFs: !inTransaction,
        // A view of the WebAssembly memory, reused by the next call: copied now.
        onRawData: (data: Uint8Array) => chunks.push(Buffer.from(data)),
      });
    });
    return readAnswer(chunks, locks.parsers, notify, () => statement && parsed.add(statement));
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
            ? await run(name, sql, params, true)
            : await locks._runExclusiveTransaction(() => run(name, sql, params, false));
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
