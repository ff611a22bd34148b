import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { baseEnv } from './helpers/base-env.js';
import { stopChild } from './helpers/stop-child.js';

/**
 * docs/partner-guide.md promises that every shell example runs as printed against `npm run demo`.
 * This runs the real demo (`forecourt demo`, as a new partner would), takes the `export` lines it
 * prints, and runs every ```sh block of the guide in order with bash, failing on the first error.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/forecourt.js');
const guide = readFileSync(path.join(ROOT, 'docs/partner-guide.md'), 'utf8');
const blocks = [...guide.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('docs/partner-guide.md against the demo', () => {
  let demo: ChildProcess;
  let dataDir: string;
  const env: Record<string, string> = {};
  let banner = '';

  /** Starts `forecourt demo` on the data directory; resolves with its banner once it is up. */
  async function startDemo(): Promise<string> {
    demo = spawn(process.execPath, [BIN, 'demo'], {
      env: { ...baseEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the demo did not start:\n${out}`)), 90_000);
      demo.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Press Ctrl+C')) {
          clearTimeout(timer);
          resolve();
        }
      });
      demo.on('exit', (code) => reject(new Error(`the demo exited (${code}):\n${out}`)));
    });
    return out;
  }

  const stopDemo = () => stopChild(demo);

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-guide-'));
    banner = await startDemo();
    for (const m of banner.matchAll(/^\s*export (FORECOURT_[A-Z_]+)=(\S+)$/gm)) env[m[1]!] = m[2]!;
    // §9's receiver: a port free on this machine (the guide's default, 8787, may be taken here).
    env.RECEIVER_PORT = String(await freePort());
  });
  after(async () => {
    // The data directory goes only once the demo has stopped writing to it.
    await stopDemo();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the demo prints every variable the guide uses', () => {
    for (const name of new Set(guide.match(/\$FORECOURT_[A-Z_]+/g))) {
      assert.ok(env[name.slice(1)], `${name} is used by the guide but not printed by the demo`);
    }
    assert.ok(blocks.length >= 8, `only ${blocks.length} sh blocks found`);
    assert.match(env.FORECOURT_TEST_SECRET ?? '', /^fc_test_/);
    assert.doesNotMatch(env.FORECOURT_SECRET ?? '', /^fc_test_/);
  });

  test('§5 names every field a new active listing needs: title, price and a dealer', () => {
    // Issue 29: it said only `title` was required, and a partner's first PUT without a price failed.
    const section = guide.slice(guide.indexOf('## 5.'), guide.indexOf('## 6.'));
    assert.doesNotMatch(section, /Only `title` is\s+required/);
    assert.match(section, /Required are\s+`title`, and `price` for a listing that is `active`/);
    assert.match(section, /a dealer \(`dealerProfileId` or `dealerLocationCode`\)/);
  });

  test('every shell example runs as printed, in order', (t) => {
    const outputs: string[] = [];
    // When §9's block began: its endpoint is registered after this.
    let webhookBlockAt = 0;
    for (const [i, block] of blocks.entries()) {
      const webhookBlock = block.includes('/webhooks"');
      if (webhookBlock) webhookBlockAt = Date.now();
      const run = spawnSync('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', block], {
        cwd: ROOT,
        env: { ...baseEnv(), HOME: os.tmpdir(), ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(
        run.status,
        0,
        `block ${i + 1} failed:\n${block}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
      );
      outputs.push(run.stdout);
      // Read right after §9 ran: §10 wipes the test listings it delivered, and nothing is left to
      // check them by at the end.
      if (webhookBlock) {
        const checked = assertOtherDeliveriesAreImageChecks(run.stdout, webhookBlockAt);
        t.diagnostic(`§9: ${checked} listing(s) delivered for an image check, each read and checked`);
      }
    }
    const all = outputs.join('\n');
    // The examples do what the guide says they do.
    assert.match(all, /"code":"UNAUTHORIZED"/);
    assert.match(all, /"code":"VALIDATION_FAILED"/);
    assert.match(all, /"created":true/);
    assert.match(all, /"successCount":2,"errorCount":1/);
    assert.match(all, /"path":"price"/);
    assert.match(all, /dry run \(nothing written\): 10 listings/);
    // The same feed twice: in test mode (§7), then live (§10), where nothing of the test run shows.
    assert.equal(
      all.match(/created 10 · updated 0 · unchanged 0 · superseded 0 · failed 0/g)?.length,
      2,
      'the feed is created in test mode, then again live',
    );
    // examples/feed-be.csv: Dutch columns, 12.500,00 prices, DSG and CVT, as the guide promises.
    assert.match(
      all,
      /6 listings in \S+feed-be\.csv\n {2}created 6 · updated 0 · unchanged 0 · superseded 0 · failed 0/,
    );
    assert.match(all, /hasMore: (true|false), nextCursor: \S+/);
    // §9: the demo delivers to a receiver on this machine, which verified the signature.
    assert.match(all, /listening on http:\/\/127\.0\.0\.1:\d+\//);
    const deliveries = [...all.matchAll(/^msg_\S+ listings\.changed: (\d+) listing\(s\) (.*)$/gm)];
    assert.ok(
      deliveries.some((d) => d[2]!.split(', ').includes('GUIDE-GOLF-1 (sold)')),
      `no delivery names GUIDE-GOLF-1 (sold):\n${all}`,
    );
    assert.ok(webhookBlockAt > 0, 'the webhook block was not found');
    assert.doesNotMatch(all, /refused:/);
    assert.match(all, /endpoint removed: 204/);
    // Test mode (§2, §10): the test secret's answers say so, a live one's do not; what the test
    // secret wrote is not seen live; the live secret cannot wipe; the wipe takes every test listing.
    assert.match(all, /^forecourt-mode: test\r?$/im);
    assert.match(all, /^live secret: no Forecourt-Mode header$/m);
    assert.match(all, /^test secret: 1 GUIDE-GOLF-1$/m);
    assert.match(all, /^live secret: 0 GUIDE-GOLF-1$/m);
    assert.match(all, /"code":"TEST_MODE_ONLY"/);
    // The demo's 6, the Golf, 2 of the bulk, the feeds' 10, 6 and 5 (§5 to §7): all in test mode.
    assert.match(all, /\{"data":\{"deleted":30\}\}/);
  });

  /**
   * Any listing §9's receiver was delivered besides the Golf is a demo listing whose image check
   * found a result after the endpoint was registered (the demo checks its images as it starts,
   * docs/partner-guide.md §9): the service changed what a partner sees, and moved its changedAt
   * alone. Nothing else changes. Each is read now, while it exists; answers how many there were.
   */
  function assertOtherDeliveriesAreImageChecks(received: string, webhookBlockAt: number): number {
    const deliveries = [...received.matchAll(/^msg_\S+ listings\.changed: (\d+) listing\(s\) (.*)$/gm)];
    const others = new Set(
      deliveries.flatMap((d) =>
        d[2]!
          .split(', ')
          .map((l) => l.replace(/ \(\w+\)$/, ''))
          .filter((ref) => ref !== 'GUIDE-GOLF-1'),
      ),
    );
    for (const ref of others) {
      const listing = readListing(ref);
      assert.ok(listing, `${ref} was delivered, yet the test secret does not read it`);
      assert.ok(
        listing.changedAt > listing.updatedAt,
        `${ref} was delivered, yet its changedAt did not move alone`,
      );
      assert.ok(
        Date.parse(listing.changedAt) >= webhookBlockAt - 1000,
        `${ref} was delivered but changed (${listing.changedAt}) before the endpoint was registered`,
      );
      assert.ok(
        listing.images.some(
          (image) =>
            image.check.checkedAt !== null && Date.parse(image.check.checkedAt) >= webhookBlockAt - 6000,
        ),
        `${ref} was delivered without a new image check result: ${JSON.stringify(listing.images)}`,
      );
    }
    return others.size;
  }

  /** A test listing as the API shows it to the read-write partner's test secret (§9 registers a test endpoint). */
  function readListing(ref: string):
    | {
        updatedAt: string;
        changedAt: string;
        images: { check: { checkedAt: string | null } }[];
      }
    | undefined {
    const run = spawnSync(
      'curl',
      [
        '-sS',
        '--fail-with-body',
        '--cacert',
        env.FORECOURT_CA!,
        '-H',
        `Authorization: Bearer ${env.FORECOURT_TEST_SECRET}`,
        `${env.FORECOURT_API}/listings?status=all&externalReference=${encodeURIComponent(ref)}`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(run.status, 0, `GET /listings?externalReference=${ref}: ${run.stdout}${run.stderr}`);
    return JSON.parse(run.stdout).data[0];
  }

  test('the demo says it delivers webhooks to loopback addresses; a restart keeps its secrets and says so', async () => {
    assert.match(banner, /delivers to loopback addresses over http too \(http:\/\/127\.0\.0\.1:PORT/);
    assert.match(banner, /new secrets, kept in \S+demo-secrets\.json: a restart prints the same ones/);
    await stopDemo();
    // Issue 29: a restart issued new secrets without a word, and what the partner exported broke.
    const again = await startDemo();
    assert.match(again, /the SAME secrets as the last run/);
    for (const name of ['FORECOURT_SECRET', 'FORECOURT_READ_SECRET', 'FORECOURT_TEST_SECRET']) {
      assert.equal(new RegExp(`export ${name}=(\\S+)`).exec(again)?.[1], env[name], name);
    }
  });
});
