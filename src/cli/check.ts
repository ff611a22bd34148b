import { parseArgs } from 'node:util';
import { parseConfig } from '../config.js';
import { openConfiguredDb } from '../store/open.js';
import { readModelStore } from '../store/read-model.js';

export const CHECK_HELP = `Usage: forecourt check read-model [--repair] [--json]

Compares the JSON text the read model keeps with every listing and every dealer (migration 011)
with the same text built fresh from their columns, and lists the ids that differ. With --repair,
rewrites those rows and checks them again. Exit status: 0 when nothing differs (or everything was
repaired), 1 when something still differs, 2 on a usage error.

It connects to the configured database (DATABASE_URL, or the embedded database in DATA_DIR: stop
the service first, the embedded database takes one process). docs/operations.md, "The read model".
`;

const SHOWN = 20;

/** `forecourt check read-model`: finds (and with --repair, rewrites) stored JSON that drifted. */
export async function runCheck(args: string[], env: Record<string, string | undefined>): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      args,
      allowPositionals: true,
      options: {
        repair: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  try {
    parsed = parse();
  } catch (error) {
    process.stderr.write(`forecourt check: ${(error as Error).message}\n\n${CHECK_HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(CHECK_HELP);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'read-model') {
    const what =
      positionals[0] === undefined ? 'missing what to check' : `unknown check "${positionals.join(' ')}"`;
    process.stderr.write(`forecourt check: ${what}\n\n${CHECK_HELP}`);
    return 2;
  }
  const db = await openConfiguredDb(parseConfig(env));
  try {
    const started = Date.now();
    const drift = await readModelStore(db).check({
      repair: values.repair ?? false,
    });
    const ms = Date.now() - started;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ...drift, repaired: values.repair ?? false, ms })}\n`);
    } else {
      const ids = (list: string[]) =>
        list.length
          ? `: ${list.slice(0, SHOWN).join(', ')}${list.length > SHOWN ? `, ... (${list.length} in all)` : ''}`
          : '';
      process.stdout.write(
        `listings: ${drift.listings} checked, ${drift.driftedListings.length} drifted${ids(drift.driftedListings)}\n` +
          `dealers: ${drift.dealers} checked, ${drift.driftedDealers.length} drifted${ids(drift.driftedDealers)}\n` +
          (values.repair
            ? `repaired: ${drift.driftedListings.length + drift.driftedDealers.length - drift.unrepaired.length}` +
              (drift.unrepaired.length
                ? `; still different after rewriting: ${drift.unrepaired.length} (the database's builder disagrees with this version's: a migration is missing)${ids(drift.unrepaired)}`
                : '') +
              '\n'
            : '') +
          `(${ms} ms)\n`,
      );
    }
    const left = values.repair
      ? drift.unrepaired.length
      : drift.driftedListings.length + drift.driftedDealers.length;
    return left === 0 ? 0 : 1;
  } finally {
    await db.close();
  }
}
