import { after, describe } from 'node:test';
import { isolatedDatabase } from './isolated-database.js';

/**
 * Several test files in one process (scripts/test.mjs writes the bundles): each process cost about
 * 1.5 s of CPU before its first test (Node.js, the service's modules, the embedded database's
 * WebAssembly compiled and first booted), about a quarter of a pass's CPU.
 *
 * Each file runs as a suite of its own, one after the other, as if alone: its top-level hooks are
 * the suite's (its `after` closes its services before the next file starts), and on PostgreSQL it
 * gets a database of its own, set in the environment before the file is loaded, so what a file
 * reads from the environment when loaded and when running is the same. The next file is loaded
 * only once this one's suite is over (its last `after` has run), or at once when it failed to load.
 */
let files = 0;

export async function runFile(name: string, url: string): Promise<void> {
  Object.assign(process.env, await isolatedDatabase(`f${process.pid}_${files++}`));
  let done!: () => void;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  let loaded!: Promise<unknown>;
  describe(name, async () => {
    loaded = import(url);
    try {
      await loaded;
    } finally {
      // Registered after the file's own hooks, so it runs after them.
      after(() => done());
    }
  });
  await Promise.race([
    finished,
    loaded.then(
      () => finished,
      () => undefined,
    ),
  ]);
}
