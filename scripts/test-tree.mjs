// The test run's copy of the repository with its TypeScript compiled ahead, once, by esbuild.
//
// Every test file runs in a process of its own, and many start child processes. Loaded through
// tsx, each process spent about 1.9 s of CPU before its first test (tsx's loader thread resolving
// and transforming every module); from compiled JavaScript, 0.65 s. With about 80 test processes
// a run, that was a quarter of the suite's CPU. tsx stays for the commands developers type.
//
// The copy mirrors the checkout: each .ts file of the compiled folders becomes a .js file beside a
// link to its source (tests hash and read some sources), and everything else is a link to the
// checkout's own file or folder (node_modules, docs, migrations, bin, dist...), so paths a test
// resolves from its own location reach the same files. esbuild transforms each file on its own,
// as tsx does; `tsc --noEmit` (npm run typecheck) is what checks the types.
//
// Two differences from running the sources through tsx, both on purpose: `@forecourt/client`
// resolves to the built package (packages/client/dist, which `npm test` builds first), as a
// partner's project would, not to its sources through tsconfig's paths; and the service's own
// child processes (store/pglite-create) start from the compiled files. The sources through tsx are
// what `npm run dev` runs.
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** The folders whose TypeScript the tests import or start. */
const COMPILED = ['src', 'test', 'packages/client/src', 'examples', 'bench', 'scripts'];
/** Linked whole, never walked: no TypeScript of ours inside (datasets, results, installed peers). */
const LINKED = new Set(['.git', 'node_modules']);
const LINKED_PATHS = new Set(['bench/.data', 'bench/results', 'bench/peer']);

function isCompiled(rel) {
  return COMPILED.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
}
function leadsToCompiled(rel) {
  return COMPILED.some((dir) => dir.startsWith(`${rel}/`));
}

/** Builds the tree at `out` (which must not exist) from `root`; resolves to `out`. */
export async function buildTestTree(root, out) {
  // Where tests write what a developer looks at afterwards (screenshots): it must be the
  // checkout's, linked, not a folder of the tree that goes with it.
  mkdirSync(path.join(root, 'test-results'), { recursive: true });
  const sources = [];
  const walk = (rel) => {
    mkdirSync(path.join(out, rel), { recursive: true });
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      const target = path.join(root, child);
      const walked = !LINKED.has(entry.name) && !LINKED_PATHS.has(child);
      if (entry.isDirectory() && walked && (isCompiled(child) || leadsToCompiled(child))) {
        walk(child);
        continue;
      }
      // A .js beside a .ts of the same name would be a link esbuild then writes through, into the
      // checkout: the compiled file takes its place.
      if (isCompiled(child) && entry.name.endsWith('.js') && existsSync(target.replace(/\.js$/, '.ts'))) {
        continue;
      }
      symlinkSync(target, path.join(out, child));
      if (
        isCompiled(child) &&
        entry.isFile() &&
        /\.m?ts$/.test(entry.name) &&
        !entry.name.endsWith('.d.ts')
      ) {
        sources.push(target);
      }
    }
  };
  walk('');
  await build({
    entryPoints: sources,
    outdir: out,
    outbase: root,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Stack traces and the test runner's locations point at the TypeScript (with --enable-source-maps).
    sourcemap: 'linked',
    sourcesContent: false,
    tsconfig: path.join(root, 'tsconfig.json'),
    logLevel: 'error',
  });
  return out;
}
