/**
 * Run by store/pglite.ts as a child process, once, when the embedded database does not exist yet:
 * creates it (initdb) in the directory given as the argument and applies the migrations, then
 * exits, and the memory all that grew to goes with the process. Tells its parent how it went.
 */
import { PGlite } from '@electric-sql/pglite';
import { migrate } from './migrate.js';
import { type CreateOutcome, OWN_PARSERS, pgliteDb } from './pglite.js';
import { typeParsers } from './pglite-statements.js';
import { inProcessWire } from './pglite-wire.js';

async function create(dir: string): Promise<CreateOutcome> {
  let db: PGlite;
  try {
    db = await PGlite.create(dir);
  } catch (error) {
    return { error: String((error as Error)?.stack ?? error) };
  }
  const wire = inProcessWire(db);
  const store = pgliteDb(wire, await typeParsers(wire, OWN_PARSERS), () => {});
  try {
    return { applied: await migrate(store) };
  } catch {
    // Rolled back whole: the parent's own `migrate` meets the same failure and reports it as on
    // any start (with its migration's name), so it is not reported from here.
    return { applied: [] };
  } finally {
    await store.close();
  }
}

// A parent that is gone (killed while it waited) holds no lock any more: stop writing, so a new
// start does not open the directory while this process still changes it.
let answered = false;
process.on('disconnect', () => {
  if (!answered) process.exit(1);
});
const outcome = await create(process.argv[2]!);
answered = true;
process.send!(outcome, () => process.disconnect());
