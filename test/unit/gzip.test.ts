import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import { gzipEngine, gzipSync } from '../../src/http/gzip.js';

// CI installs libisal-dev before `npm ci` and sets this, so a build that silently fell back to
// zlib fails here instead of shipping a slower service unnoticed.
const expectIsal = process.env.FORECOURT_EXPECT_ISAL === '1';
const require = createRequire(import.meta.url);
const loadNative = () => require('@forecourt/igzip') as { gzip(input: unknown): Buffer | null };

const inputs: [string, Buffer][] = [
  ['empty', Buffer.alloc(0)],
  ['one byte', Buffer.from('{')],
  [
    'a page of listings',
    Buffer.from(
      JSON.stringify({
        data: Array.from({ length: 50 }, (_, i) => ({
          id: `0193a0c2-7e1f-7000-8000-${String(i).padStart(12, '0')}`,
          title: `Škoda Octavia Combi 2.0 TDI ${i} — 1ère main, Überführung inklusive`,
          images: Array.from({ length: 8 }, (_, k) => ({
            url: `https://cdn.example/${i}/${k}.jpg`,
            check: null,
          })),
        })),
      }),
    ),
  ],
  // Incompressible: deflate must fall back to stored blocks, so the output is larger than the input.
  ['300 kB of random bytes', randomBytes(300_000)],
  // Larger than the service compresses in one call, and repetitive: long matches.
  ['2 MiB of one byte', Buffer.alloc(2 * 1024 * 1024, 0x61)],
];

test('gzip decodes to exactly its input, whichever library wrote it', () => {
  for (const [name, input] of inputs) {
    const output = gzipSync(input, { level: 3 });
    assert.equal(output[0], 0x1f, name);
    assert.equal(output[1], 0x8b, name);
    assert.ok(zlib.gunzipSync(output).equals(input), name);
  }
});

test('the library named is the one that wrote the bytes', () => {
  if (expectIsal) assert.equal(gzipEngine, 'isa-l', 'CI builds native/igzip; it did not load');
  const input = inputs[2]![1];
  const fromZlib = zlib.gzipSync(input, { level: 3 });
  if (gzipEngine === 'zlib') {
    assert.ok(gzipSync(input, { level: 3 }).equals(fromZlib));
    return;
  }
  // ISA-L's stream differs from zlib's for the same text, and is not much larger.
  const fromIsal = gzipSync(input, { level: 3 });
  assert.ok(!fromIsal.equals(fromZlib));
  assert.ok(fromIsal.length < fromZlib.length * 1.25, `${fromIsal.length} against ${fromZlib.length}`);
});

test('the native module: refuses what is not bytes, finishes every input itself, reuses its buffers', (t) => {
  if (gzipEngine !== 'isa-l') return t.skip('native/igzip is not built on this machine');
  const native = loadNative();
  for (const bad of ['text', 42, undefined, new Uint16Array(4), {}]) {
    assert.throws(() => native.gzip(bad), TypeError);
  }
  // gzipSync would hide a null (zlib takes over): each input must come back from ISA-L itself,
  // the incompressible one included (its output bound).
  for (const [name, input] of inputs) {
    const output = native.gzip(input);
    assert.ok(output !== null, `${name}: ISA-L gave up`);
    assert.ok(zlib.gunzipSync(output).equals(input), name);
  }
  // A view into a larger buffer: only its own bytes.
  const whole = Buffer.from('xxxx{"a":1}yyyy');
  assert.equal(zlib.gunzipSync(native.gzip(whole.subarray(4, 11))!).toString(), '{"a":1}');
  // Its buffers are reused between calls: a large answer, then a small one, then the large again.
  const large = inputs[4]![1];
  const small = inputs[1]![1];
  const first = native.gzip(large)!;
  assert.ok(zlib.gunzipSync(native.gzip(small)!).equals(small));
  assert.ok(zlib.gunzipSync(first).equals(large));
  assert.ok(native.gzip(large)!.equals(first));
});

test('each thread has its own engine, freed when the thread ends', async (t) => {
  if (gzipEngine !== 'isa-l') return t.skip('native/igzip is not built on this machine');
  const code = `
    const { parentPort } = require('node:worker_threads');
    const native = require(${JSON.stringify(require.resolve('@forecourt/igzip'))});
    const input = Buffer.from(JSON.stringify({ n: Array.from({ length: 5000 }, (_, i) => i) }));
    parentPort.postMessage({ input, output: native.gzip(input) });
    setInterval(() => native.gzip(input), 1);`;
  for (let round = 0; round < 3; round++) {
    const worker = new Worker(code, { eval: true });
    const { input, output } = await new Promise<{ input: Uint8Array; output: Uint8Array }>(
      (resolve, reject) => worker.once('message', resolve).once('error', reject),
    );
    assert.ok(zlib.gunzipSync(output).equals(Buffer.from(input)));
    // Ended while it compresses: its environment's engine is released, this thread's is not.
    await worker.terminate();
    assert.ok(zlib.gunzipSync(loadNative().gzip(inputs[2]![1])!).equals(inputs[2]![1]));
  }
});
