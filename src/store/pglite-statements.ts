import { types } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';
import type {
  BackendMessage,
  CommandCompleteMessage,
  DataRowMessage,
  NotificationResponseMessage,
  RowDescriptionMessage,
} from 'pg-protocol/dist/messages.js';
import { Parser } from 'pg-protocol/dist/parser.js';
import type { Queryable } from './db.js';
import { assertWithin, labelDbError, rolledBackAtCommit } from './errors.js';
import type { Wire } from './pglite-wire.js';
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
 * of the WebAssembly memory, which the next call reuses. Every statement goes this way, scripts
 * and a transaction's BEGIN and COMMIT included, so every notification is read here and handed to
 * `notify` (store/pglite.ts).
 *
 * Only a listing write's statements are prepared by name here (PREPARED_WRITES: parsed once, and
 * planned generically once PostgreSQL finds that as good, plan_cache_mode being left at its
 * default): their texts are several kilobytes. A prepared page saved no measurable time (its text
 * is short since the read model, and it is planned for its values on every run), and planning
 * prepared statements for their values (plan_cache_mode) also re-plans every statement of the
 * triggers' PL/pgSQL, which made a bulk write of 100 a fifth slower.
 */

/**
 * Reads one answer: its rows as objects, each value through PGlite's type parsers (as its query()
 * does), and its last command tag. `parsed` is told when a Parse succeeded (a named statement now
 * exists).
 */
function readAnswer(
  chunks: readonly Buffer[],
  parsers: Parsers,
  notify: (channel: string) => void,
  parsed: () => void = () => {},
): { rows: Record<string, unknown>[]; command: string } {
  const rows: Record<string, unknown>[] = [];
  let names: string[] = [];
  let parse: ((value: string) => unknown)[] = [];
  let command = '';
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
      case 'commandComplete':
        command = (message as CommandCompleteMessage).text;
        break;
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
  return { rows, command };
}

type Parsers = NonNullable<Parameters<typeof types.parseType>[2]>;

/**
 * How each column's text becomes a value: PGlite's parsers (every built-in type, and an array of
 * any type the database has, as PGlite's own query() reads them when it opens), with `own` over
 * them.
 */
export async function typeParsers(wire: Wire, own: Parsers): Promise<Parsers> {
  const parsers: Parsers = { ...types.parsers, ...own };
  const { rows } = readAnswer(
    await wire.send(
      serialize.query(`SELECT b.oid, b.typarray FROM pg_catalog.pg_type a
        LEFT JOIN pg_catalog.pg_type b ON b.oid = a.typelem
        WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray ORDER BY b.oid`),
      false,
    ),
    parsers,
    () => {},
  );
  for (const { oid, typarray } of rows as { oid: number; typarray: number }[])
    parsers[typarray] = (value: string) => types.arrayParser(value, parsers[oid] ?? String, typarray);
  return parsers;
}

/** One at a time, in the order asked: the embedded database has one connection. */
function exclusive() {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = last.then(fn, fn);
    last = run.catch(() => {});
    return run;
  };
}

/**
 * A transaction's handle: `begun` once its BEGIN went out (with its first statement), `closed`
 * once it ended, after which it is refused.
 */
interface Handle {
  begun: boolean;
  closed: boolean;
}

const BEGIN = serialize.query('BEGIN');

/**
 * The statements and transactions of one embedded database over `wire`. Transactions, and
 * statements outside one, take turns (PGlite's own transaction() and query() do the same); inside
 * a transaction nothing is synced to the file system before it ends.
 */
export function pgliteStatements(wire: Wire, parsers: Parsers, notify: (channel: string) => void) {
  const turn = exclusive();
  // A listing write's statements (PREPARED_WRITES), by text: their names, and those parsed (or
  // being parsed: a second use sent before the first's answer came must not parse it again).
  const names = new Map<string, string>();
  const parsed = new Set<string>();

  /**
   * Sends `messages`: outside a transaction, synced to the file system after; inside one, after
   * its BEGIN when they are its first, in the same batch: each batch is a trip to the database's
   * thread and back, which a write of a few statements otherwise pays once more.
   */
  function send(messages: Buffer[], tx: Handle | undefined): Promise<Buffer[]> {
    if (tx && !tx.begun) {
      tx.begun = true;
      messages.unshift(BEGIN);
    }
    return wire.send(messages.length === 1 ? messages[0]! : Buffer.concat(messages), !tx);
  }

  async function run(name: string, sql: string, params: readonly unknown[], tx: Handle | undefined) {
    // A string, null, or a Buffer (bytea), which the Bind message sends in binary format.
    const values = params.map((value) => prepareValue(value) as string | Buffer | null);
    let statement = '';
    if (PREPARED_WRITES.has(name)) {
      statement = names.get(sql) ?? `${name}_${names.size}`;
      names.set(sql, statement);
    }
    const parsing = statement !== '' && !parsed.has(statement);
    if (parsing) parsed.add(statement);
    const messages = [
      ...(statement && !parsing ? [] : [serialize.parse({ name: statement, text: sql, types: [] })]),
      serialize.bind({ statement, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ];
    let done = !parsing;
    try {
      return readAnswer(await send(messages, tx), parsers, notify, () => {
        done = true;
      }).rows;
    } finally {
      if (!done) parsed.delete(statement);
    }
  }

  /** A script (migrations, COMMIT): PostgreSQL's simple query, several statements at once. */
  const script = async (sql: string, tx: Handle | undefined) =>
    readAnswer(await send([serialize.query(sql)], tx), parsers, notify).command;

  /**
   * A Queryable on the database (`tx` absent) or inside a transaction. A transaction's handle used
   * after its transaction ended is refused as PGlite refuses it: its statement could otherwise run
   * inside another caller's transaction.
   */
  function queryable(tx?: Handle): Queryable {
    const within = <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      const attempt = async () => {
        if (tx?.closed) throw new Error('Transaction is closed');
        return fn();
      };
      return (tx ? attempt() : turn(attempt)).catch((error: unknown) => {
        throw labelDbError(error, name);
      });
    };
    return {
      query: <T>(name: string, sql: string, params: readonly unknown[] = []) =>
        within(name, () => run(name, sql, params, tx)) as Promise<T[]>,
      exec: (name: string, sql: string) => within(name, () => script(sql, tx).then(() => {})),
    };
  }

  /**
   * Runs `fn` in a transaction: committed when it resolves, rolled back when it throws, and
   * refused when PostgreSQL rolled it back at COMMIT (rolledBackAtCommit).
   */
  function transaction<T>(fn: (tx: Queryable) => Promise<T>, maxMs?: number): Promise<T> {
    return turn(async () => {
      // The clock starts once the connection is this transaction's: waiting for it does not count.
      const startedAt = performance.now();
      const handle: Handle = { begun: false, closed: false };
      // Its end is synced to the file system as a statement outside a transaction is.
      const end = (sql: string) => script(sql, undefined);
      try {
        const result = await fn(queryable(handle));
        assertWithin(startedAt, maxMs);
        handle.closed = true;
        if (handle.begun && (await end('COMMIT')) === 'ROLLBACK') throw rolledBackAtCommit();
        return result;
      } catch (error) {
        if (!handle.closed) {
          handle.closed = true;
          // The first error is the answer; a rollback that fails too has nothing to add.
          if (handle.begun) await end('ROLLBACK').catch(() => {});
        }
        throw error;
      }
    });
  }

  /**
   * Closes the database once the statements and transactions already waiting have run (PGlite's
   * own close() waited for them the same way); whatever comes after is refused by the wire.
   */
  const close = () => turn(() => wire.close());

  return { queryable, transaction, close };
}
