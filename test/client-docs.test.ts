import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { baseEnv } from './helpers/base-env.js';
import { stopChild } from './helpers/stop-child.js';

/**
 * docs/client.md is made of examples/client-tour.ts: every ```ts block of the page must be in the
 * file word for word, and the file must run as printed against `forecourt demo` (a real demo
 * process, started the way a partner starts it), twice: the second run finds its writes unchanged.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const TOUR = path.join(ROOT, 'examples/client-tour.ts');
const run = promisify(execFile);

let demo: ChildProcess;
let dataDir: string;
const env: Record<string, string> = {};

before(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-client-docs-'));
  demo = spawn(process.execPath, [path.join(ROOT, 'bin/forecourt.js'), 'demo'], {
    env: { ...baseEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    demo.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Press Ctrl+C')) resolve();
    });
    demo.on('exit', (code) => reject(new Error(`the demo exited (${code}):\n${out}`)));
  });
  for (const m of out.matchAll(/^\s*export (FORECOURT_[A-Z_]+)=(\S+)$/gm)) env[m[1]!] = m[2]!;
});
after(async () => {
  await stopChild(demo);
  rmSync(dataDir, { recursive: true, force: true });
});

test('every TypeScript block of docs/client.md is part of examples/client-tour.ts', () => {
  const page = readFileSync(path.join(ROOT, 'docs/client.md'), 'utf8');
  const blocks = [...page.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  assert.ok(blocks.length >= 6, `only ${blocks.length} ts blocks`);
  const tour = readFileSync(TOUR, 'utf8');
  for (const block of blocks) assert.ok(tour.includes(block), `not in examples/client-tour.ts:\n${block}`);
});

test('examples/client-tour.ts runs as printed against the demo, and again', async () => {
  const tour = async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', TOUR], {
      cwd: ROOT,
      env: { ...baseEnv(), ...env, CURSOR_FILE: path.join(dataDir, 'cursor.txt') },
    });
    return stdout;
  };
  const first = await tour();
  assert.match(first, /^mode: live$/m, 'FORECOURT_SECRET is the live read-write secret');
  assert.match(first, /^VDB-GENT Vandenberghe Gent \d+$/m);
  assert.match(first, /^created [0-9a-f-]{36}$/m);
  assert.match(first, /^422 VALIDATION_FAILED \S+\n {2}price: .+\n {2}vin: .+$/m);
  assert.match(
    first,
    /^batch 3\/3: items up to 250 sent\n249 0 0 1\nitem 17 \(TOUR-FEED-17\): VALIDATION_FAILED/m,
  );
  const read = (out: string) => Number(/^(\d+) listings read; next run starts after \S+$/m.exec(out)?.[1]);
  // How far the cursor gets depends on the commit horizon (docs/sync.md), so only that it reads.
  assert.ok(read(first) > 0, first);
  assert.ok(existsSync(path.join(dataDir, 'cursor.txt')), 'the cursor is stored');

  const second = await tour();
  assert.match(second, /^unchanged [0-9a-f-]{36}$/m);
  assert.match(second, /^0 0 249 1$/m, 'the same feed again: nothing to write');
  assert.ok(read(second) > 0, second);
});
