// `npm test`: the whole suite on one database (the embedded one, or PostgreSQL with DATABASE_URL),
// TEST_CONCURRENCY (default 3) files at a time, the longest first: each boots its own service on
// its own embedded database or its own PostgreSQL database, and much of a file's time is spent
// waiting (child processes, deliveries, timers), so files overlap well even on two cores. No file
// stops the machine's PostgreSQL server (an outage or a crash is shown on a server of the test's
// own: test/helpers/own-postgres.ts), so on PostgreSQL too every file runs in the one group.
// Arguments, when given, replace the file list (`npm test -- test/sync.test.ts`); files after
// `--except` are left out of it instead.
// `--db-only` leaves out what does not depend on the database (CI's PostgreSQL pass: the embedded
// pass runs them): test/unit/, the files that only ever start the demo (embedded), the document,
// the reference page and the client package.
// Prints each group's TAP report as node's test runner writes it, then one closing line for all.
import { spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BROWSER_TESTS, ensureChromium } from './chromium.mjs';
import { buildTestTree } from './test-tree.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const concurrency = process.env.TEST_CONCURRENCY ?? '3';

const list = (dir) =>
  readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `${dir}/${f}`);

/**
 * Files whose outcome does not depend on the database behind the service: they start `forecourt
 * demo` (always embedded), or check what is the same on any database: the OpenAPI document and
 * the reference page built from the route schemas, the client package as npm installs it, the
 * image fetcher against its local image server (no service, no database).
 */
const DB_INDEPENDENT = [
  'test/client-docs.test.ts',
  'test/client-package.test.ts',
  'test/demo-images.test.ts',
  'test/demo-process.test.ts',
  'test/docs-page.test.ts',
  'test/image-fetch.test.ts',
  'test/openapi.test.ts',
  'test/partner-guide.test.ts',
  'test/webhooks-docs.test.ts',
];

/**
 * The files that take longest, longest first (embedded pass, this machine's kind, 2026-11-26): a
 * file started last ends last, so the long ones start while the short ones fill the gaps. The
 * rest follow in alphabetical order, the unit layer at the very end.
 */
const SLOWEST = [
  'test/console-first-day.test.ts',
  'test/storage.test.ts',
  'test/fuzz.test.ts',
  'test/crash-consistency.test.ts',
  'test/startup-failures.test.ts',
  'test/authz-matrix.test.ts',
  'test/document-properties.test.ts',
  'test/read-model.test.ts',
  'test/import.test.ts',
  'test/partner-guide.test.ts',
  'test/docs-page.test.ts',
  'test/console.test.ts',
  'test/model-concurrency.test.ts',
  'test/hostile-layer.test.ts',
  'test/hostile-text.test.ts',
  'test/client-package.test.ts',
  'test/webhooks-e2e.test.ts',
  'test/client-docs.test.ts',
  'test/sync-example.test.ts',
];
const slowestFirst = (files) => {
  const rank = (f) => (SLOWEST.includes(f) ? SLOWEST.indexOf(f) : SLOWEST.length);
  return [...files].sort((a, b) => rank(a) - rank(b));
};

// The unit layer runs in one process (a file written into the compiled tree that imports each of
// test/unit/): its files start no service and share no state, and a process each cost about
// 0.7 s of CPU apiece.
const UNIT_LAYER = 'test/unit/layer.generated.test.ts';

/**
 * The other integration files run several to a process, in TEST_BUNDLES (default 16) bundles
 * written into the compiled tree (test/helpers/bundle.ts runs each file as if alone: its own
 * hooks, its own PostgreSQL database). A process cost about 1.5 s of CPU before its first test
 * (Node.js, the service's modules, the embedded database's WebAssembly compiled and first booted),
 * a quarter of a pass. Each file goes to the bundle with the least source so far, largest first,
 * so that the bundles take about as long. TEST_BUNDLES=0 runs every file in a process of its own,
 * as a list of files given as arguments always does.
 */
const BUNDLES = Number(process.env.TEST_BUNDLES ?? 16);
const bundleName = (n) => `test/bundle-${String(n).padStart(2, '0')}.generated.test.ts`;

function bundled(files) {
  const alone = files.filter((f) => SLOWEST.includes(f));
  const rest = files.filter((f) => !SLOWEST.includes(f));
  const count = Math.min(BUNDLES, rest.length);
  if (count <= 1) return { files: slowestFirst(files), bundles: [] };
  const bundles = Array.from({ length: count }, (_, n) => ({ name: bundleName(n), files: [], size: 0 }));
  const sized = rest
    .map((f) => ({ f, size: statSync(path.join(ROOT, f)).size }))
    .sort((a, b) => b.size - a.size);
  for (const { f, size } of sized) {
    const lightest = bundles.reduce((a, b) => (b.size < a.size ? b : a));
    lightest.files.push(f);
    lightest.size += size;
  }
  for (const b of bundles) b.files.sort();
  return { files: [...slowestFirst(alone), ...bundles.map((b) => b.name)], bundles };
}

const fromRoot = (file) => path.relative(ROOT, path.resolve(ROOT, file));
const dbOnly = process.argv.includes('--db-only');
// `--except <files>`: the whole list but these (CI runs a pass's files on two Node.js lines).
const exceptAt = process.argv.indexOf('--except');
const excepted = exceptAt < 0 ? [] : process.argv.slice(exceptAt + 1).map(fromRoot);
const args = process.argv.slice(2, exceptAt < 0 ? undefined : exceptAt).filter((a) => a !== '--db-only');
const suite = list('test');
// What --except would pass over in silence is refused: no file after it, a file not in the suite
// (a typo), or files or options before it (a chosen list has nothing to leave out).
const unknown = excepted.filter((f) => f !== UNIT_LAYER && !suite.includes(f));
function exceptRefusal() {
  if (exceptAt < 0) return undefined;
  if (excepted.length === 0) return '--except names no file';
  if (unknown.length) return `--except names no test file of the suite: ${unknown.join(', ')}`;
  if (args.length)
    return `--except leaves files out of the whole suite, and takes only --db-only before it, not ${args.join(' ')}`;
  return undefined;
}
const refused = exceptRefusal();
if (refused) {
  console.error(refused);
  process.exit(2);
}
const integration = suite.filter((f) => !(dbOnly && DB_INDEPENDENT.includes(f)) && !excepted.includes(f));
const unitLayer = dbOnly || excepted.includes(UNIT_LAYER) ? [] : [UNIT_LAYER];
// The unit layer needs no group of its own: one group, so that no core waits for a group's last
// file.
const { files: scheduled, bundles } = args.length ? { files: [], bundles: [] } : bundled(integration);
const groups = args.length
  ? [{ name: 'selected files', files: args, concurrency }]
  : [
      {
        name: dbOnly ? 'integration' : 'integration and unit',
        files: [...scheduled, ...unitLayer],
        concurrency,
      },
    ];

const runsFile = (f) =>
  groups.some((group) => group.files.includes(f)) || bundles.some((b) => b.files.includes(f));
if (BROWSER_TESTS.some((f) => runsFile(f) || args.map(fromRoot).includes(f))) ensureChromium();

// Temporary files (embedded databases copied from a template for every boot, data directories of
// child services, browser profiles) go to memory where the machine has it: on this kind of
// machine (ext4 mounted with discard) copying a 39 MB, 1,055-file database took 354 ms and
// removing it 391 ms; on /dev/shm 78 ms and 28 ms, and a suite boots the service about 150 times.
// One directory per run, removed at the end (runs side by side never remove each other's files);
// the templates stay beside it for the next run. TMPDIR set by the caller wins.
const SHM = '/dev/shm';
let runTmp;
if (!process.env.TMPDIR && existsSync(SHM)) {
  try {
    accessSync(SHM, constants.W_OK);
    runTmp = mkdtempSync(path.join(SHM, 'forecourt-test-run-'));
    // As /tmp is: the PostgreSQL servers of tests' own (test/helpers/own-postgres.ts) run initdb
    // as the postgres user in here.
    chmodSync(runTmp, 0o1777);
    // tsx keeps what it compiled in <temp>/tsx-<uid>: the one of the usual temp directory, kept
    // between runs, rather than a cold one per run.
    const compiled = `tsx-${os.userInfo().uid}`;
    mkdirSync(path.join(os.tmpdir(), compiled), { recursive: true });
    symlinkSync(path.join(os.tmpdir(), compiled), path.join(runTmp, compiled));
    process.env.TMPDIR = runTmp;
    process.env.FORECOURT_TEST_TEMPLATES ??= SHM;
  } catch {
    // No memory to use: the usual temp directory, and nothing left behind in /dev/shm.
    if (runTmp) rmSync(runTmp, { recursive: true, force: true });
    runTmp = undefined;
  }
}
const removeRunTmp = () => runTmp && rmSync(runTmp, { recursive: true, force: true });

// The tests run from a copy of the checkout with its TypeScript compiled ahead (scripts/test-tree.mjs).
const treeParent = runTmp ?? mkdtempSync(path.join(os.tmpdir(), 'forecourt-test-tree-'));
const TREE = path.join(treeParent, 'tree');
/** node's test runner while a group runs, and what stops it with every process of its group. */
let runner;
const stopRunner = () => {
  try {
    if (runner) process.kill(-runner.pid, 'SIGKILL');
  } catch {}
};
const removeTree = () => rmSync(runTmp ? TREE : treeParent, { recursive: true, force: true });
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
])
  process.once(signal, () => {
    // The runner has a process group of its own (below): out of the terminal's, Ctrl+C no longer
    // reaches it by itself.
    stopRunner();
    removeTree();
    removeRunTmp();
    process.exit(code);
  });
try {
  await buildTestTree(ROOT, TREE);
  writeFileSync(
    path.join(TREE, 'test/unit/layer.generated.test.js'),
    list('test/unit')
      .map((f) => `await import('./${path.basename(f, '.ts')}.js');\n`)
      .join(''),
  );
  for (const bundle of bundles) {
    writeFileSync(
      path.join(TREE, bundle.name.replace(/\.ts$/, '.js')),
      [
        "import { runFile } from './helpers/bundle.js';",
        ...bundle.files.map(
          (f) => `await runFile('${f}', new URL('./${path.basename(f, '.ts')}.js', import.meta.url).href);`,
        ),
        '',
      ].join('\n'),
    );
  }
} catch (error) {
  removeTree();
  removeRunTmp();
  throw error;
}
const inTree = (file) =>
  path.join(TREE, path.relative(ROOT, path.resolve(ROOT, file)).replace(/\.ts$/, '.js'));
// Options for node's test runner among the arguments (`--test-name-pattern=…`) go before the files.
const isOption = (arg) => arg.startsWith('-');

// Every process of the run (test files, and the services and commands they start, which are given
// FORECOURT_TEST_NODE_OPTIONS as their NODE_OPTIONS: test/helpers/base-env.ts) compiles WebAssembly
// with V8's baseline compiler only (test/helpers/wasm-baseline.ts says why);
// FORECOURT_TEST_WASM_TIERS=all keeps V8's default.
if (process.env.FORECOURT_TEST_WASM_TIERS !== 'all') {
  process.env.FORECOURT_TEST_NODE_OPTIONS = `--import=${pathToFileURL(inTree('test/helpers/wasm-baseline.ts'))}`;
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, process.env.FORECOURT_TEST_NODE_OPTIONS]
    .filter(Boolean)
    .join(' ');
}

// On PostgreSQL, each file's process gets a database of its own (test/helpers/isolated-database.ts).
const isolate = process.env.DATABASE_URL ? ['--import', inTree('test/helpers/isolated-database.ts')] : [];

/**
 * Bounds on a run, so that a test that never ends fails the run with its name instead of holding
 * it (and CI) until an outer limit kills everything without a word. Each file's process (a bundle
 * too) and each test in it is cancelled after TEST_TIMEOUT_S (default 900 s, far beyond any file
 * here). The whole group is stopped after TEST_RUN_LIMIT_S (default 1800 s; a pass takes 600 to
 * 900 s on this machine's kind with the rest of CI beside it), naming the files that had not
 * reported: a process that finished its tests but never exits (a handle left open) is caught
 * there, as node's test runner waits for it.
 */
function seconds(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a number of seconds above 0, not "${process.env[name]}"`);
    removeTree();
    removeRunTmp();
    process.exit(2);
  }
  return value * 1000;
}
const TEST_TIMEOUT_MS = seconds('TEST_TIMEOUT_S', 900);
const RUN_LIMIT_MS = seconds('TEST_RUN_LIMIT_S', 1800);

function run(group) {
  return new Promise((resolve) => {
    process.stdout.write(`# ${group.name}: ${group.files.length} files, ${group.concurrency} at a time\n`);
    // Which file ran in which process: a bundle's report names each file as a suite of its own.
    for (const b of bundles) process.stdout.write(`# ${b.name}: ${b.files.join(' ')}\n`);
    const files = group.files.filter((f) => !isOption(f));
    const child = spawn(
      process.execPath,
      [
        '--enable-source-maps',
        ...isolate,
        '--test',
        // TAP on every Node.js version (24's default is another format): the counts below are read from it.
        '--test-reporter=tap',
        `--test-concurrency=${group.concurrency}`,
        `--test-timeout=${TEST_TIMEOUT_MS}`,
        ...group.files.filter(isOption),
        ...files.map(inTree),
      ],
      // A process group of its own, so that the limit below stops the test files' processes too.
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], detached: true },
    );
    runner = child;
    const reported = new Set();
    let limited = false;
    const limit = setTimeout(() => {
      limited = true;
      const waiting = files
        .filter((f) => !reported.has(path.basename(f, '.ts')))
        .flatMap((f) => bundles.find((b) => b.name === f)?.files.filter((g) => !reported.has(g)) ?? [f]);
      process.stdout.write(
        `not ok - the run did not end within ${RUN_LIMIT_MS / 1000} s (TEST_RUN_LIMIT_S); stopped.\n` +
          `# files that had not reported: ${waiting.join(' ') || '(none: a process did not exit)'}\n`,
      );
      stopRunner();
    }, RUN_LIMIT_MS);
    const counts = { pass: 0, fail: 0, cancelled: 0, skipped: 0 };
    let tail = '';
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const text = chunk.toString();
      tail = (tail + text).slice(-2000);
      // A file has reported once the runner's top-level line for it is out ("ok 3 - /…/x.test.js").
      const lines = (pending + text).split('\n');
      pending = lines.pop();
      for (const line of lines) {
        const top = /^(?:not )?ok \d+ - .*\/([^/]+)\.test\.js\b/.exec(line);
        if (top) reported.add(`${top[1]}.test`);
        // A bundle's file, a suite inside it: "    ok 2 - test/x.test.ts".
        const inBundle = /^\s+(?:not )?ok \d+ - (test\/\S+\.test\.ts)$/.exec(line);
        if (inBundle) reported.add(inBundle[1]);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(limit);
      runner = undefined;
      for (const name of Object.keys(counts)) {
        const match = new RegExp(`^# ${name} (\\d+)$`, 'm').exec(tail);
        counts[name] = match ? Number(match[1]) : 0;
      }
      resolve({ code: code ?? (signal ? 1 : 0), signal, limited, counts });
    });
  });
}

/**
 * The per-file databases of this run (`<name>_f<pid>`, `<name>_f<pid>_<n>`) and the template they were copied from
 * (`<name>_template`), dropped once every group has run.
 */
async function dropIsolatedDatabases() {
  if (!process.env.DATABASE_URL) return;
  const { default: pg } = await import('pg');
  const shared = new URL(process.env.DATABASE_URL);
  const base = shared.pathname.slice(1);
  shared.pathname = '/postgres';
  const client = new pg.Client({ connectionString: shared.toString() });
  try {
    await client.connect();
    const { rows } = await client.query(
      String.raw`SELECT datname FROM pg_database WHERE datname ~ ('^' || $1 || '_(f\d+(_\d+)?|template)$')`,
      [base],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } catch (error) {
    console.error(`# could not drop the per-file test databases: ${error.message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

const total = { pass: 0, fail: 0, cancelled: 0, skipped: 0 };
let failed = false;
for (const group of groups) {
  const { code, signal, limited, counts } = await run(group);
  for (const name of Object.keys(total)) total[name] += counts[name];
  if (code !== 0) failed = true;
  // A runner that fails with no failing test (an error at exit, a signal) would leave a failed run
  // with nothing to point at: say so in a line CI repeats at the end (.ci/run, failures()).
  // (Not when the run's limit stopped it: that said so already.)
  if (code !== 0 && counts.fail === 0 && counts.cancelled === 0 && !limited) {
    const how = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
    process.stdout.write(
      `not ok - ${group.name}: the test runner ${how} though no test failed; what it printed above says why\n`,
    );
  }
}
await dropIsolatedDatabases();
removeTree();
removeRunTmp();
console.log(
  `${total.pass} passed, ${total.fail} failed, ${total.cancelled} cancelled (timed out), ${total.skipped} skipped`,
);
// A run that counted no passing test proved nothing (a reporter that changed, a wrong file list).
if (total.pass === 0) console.error('no test passed: treated as a failure');
process.exit(failed || total.pass === 0 ? 1 : 0);
