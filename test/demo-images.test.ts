import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { demoImage } from '../src/demo/images/index.js';
import { baseEnv } from './helpers/base-env.js';
import { keptAliveClient } from './helpers/https-call.js';
import { stopChild } from './helpers/stop-child.js';

/**
 * The demo works offline (issue 43): it serves its sample images itself and its listings use
 * them, so within seconds of `forecourt demo` every image of every demo listing ends in the state
 * docs/images.md gives its sample (ok, too_small, too_large, not_an_image, unreachable with 404),
 * and each listing's readiness says why it can or cannot go live. The real demo (embedded, as a
 * new partner starts it) is asked over its API, as a partner would.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/forecourt.js');

interface Check {
  state: string;
  problem: { code: string } | null;
  width: number | null;
}
interface Listing {
  externalReference: string;
  status: string;
  images: { url: string; check: Check }[];
  readiness: { live: boolean; reasons: { code: string }[] };
}

describe('the demo serves its own images and checks them', () => {
  let demo: ChildProcess;
  let dataDir: string;
  let banner = '';
  let startedAt = 0;

  async function startDemo(): Promise<string> {
    startedAt = Date.now();
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
      demo.stderr!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      demo.on('exit', (code) => reject(new Error(`the demo exited (${code}):\n${out}`)));
    });
    return out;
  }
  const exported = (name: string, text = banner) => new RegExp(`export ${name}=(\\S+)`).exec(text)?.[1] ?? '';
  const imagesOrigin = (text: string) =>
    /serves its listings' sample photos itself at (\S+)\/demo-images\//.exec(text)?.[1];

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-demo-images-'));
    banner = await startDemo();
  });
  after(async () => {
    await stopChild(demo);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Every demo listing, as the read-only partner reads them. */
  async function allListings(): Promise<Listing[]> {
    const client = keptAliveClient(readFileSync(exported('FORECOURT_CA'), 'utf8'));
    try {
      const listings: Listing[] = [];
      let cursor: string | undefined;
      do {
        const reply = await client.call(
          exported('FORECOURT_URL'),
          'GET',
          `/api/external/v1/listings?status=all&pageSize=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          { headers: { authorization: `Bearer ${exported('FORECOURT_READ_SECRET')}` } },
        );
        assert.equal(reply.status, 200, reply.text);
        const body = reply.body as { data: Listing[]; pagination: { hasMore: boolean; nextCursor?: string } };
        listings.push(...body.data);
        cursor = body.pagination.hasMore ? body.pagination.nextCursor : undefined;
      } while (cursor);
      return listings;
    } finally {
      await client.close();
    }
  }

  test('every image ends in its sample’s state, and readiness gives the reasons', async () => {
    const origin = imagesOrigin(banner);
    assert.match(origin ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, banner);
    let listings: Listing[] = [];
    for (;;) {
      listings = await allListings();
      if (!listings.some((l) => l.images.some((i) => i.check.state === 'pending'))) break;
      // A bound on waiting, not a measure of speed (tests time nothing: on a busy CI machine the
      // checks of a fresh demo took 44 s, alone about 10 s): checks that never end fail here.
      assert.ok(Date.now() - startedAt < 120_000, 'images still pending two minutes after the demo started');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(listings.length, 300);

    const seen = new Map<string, number>();
    for (const listing of listings) {
      for (const image of listing.images) {
        const url = new URL(image.url);
        assert.equal(url.origin, origin, image.url);
        const sample = demoImage(url.pathname);
        assert.ok(sample, `${image.url} is no sample`);
        assert.equal(image.check.state, sample.expected, `${listing.externalReference} ${image.url}`);
        if (sample.status === 404) assert.equal(image.check.problem?.code, 'not_found');
        if (sample.expected === 'ok') assert.equal(image.check.problem, null);
        seen.set(image.check.state, (seen.get(image.check.state) ?? 0) + 1);
      }
      // DEMO-00001 is place 0 (src/demo/listing-images.ts).
      const place = Number(listing.externalReference.slice(5)) - 1;
      const codes = listing.readiness.reasons.map((r) => r.code);
      const kind = place % 20;
      if ([3, 7, 11, 15].includes(kind)) assert.ok(codes.includes('no_working_image'), `${place}: ${codes}`);
      else if (kind === 13) assert.ok(codes.includes('no_images'), `${place}: ${codes}`);
      else assert.ok(!codes.some((c) => c.startsWith('no_') || c === 'images_pending'), `${place}: ${codes}`);
      assert.equal(listing.readiness.live, listing.status === 'active' && codes.length === 0);
    }
    for (const state of ['ok', 'too_small', 'too_large', 'not_an_image', 'unreachable']) {
      assert.ok(seen.get(state), `no image is ${state}: ${JSON.stringify([...seen])}`);
    }
    // A good photo and a broken one in one listing: live all the same.
    assert.ok(
      listings.some((l) => l.readiness.live && l.images.some((i) => i.check.state !== 'ok')),
      'no live listing shows a broken image beside a good one',
    );
  });

  test('a restart serves the images at the same address, so the seeded URLs keep working', async () => {
    const origin = imagesOrigin(banner);
    await stopChild(demo);
    const again = await startDemo();
    assert.equal(imagesOrigin(again), origin);
    const sample = await fetch(`${origin}/demo-images/blue-car.jpg?n=1`);
    assert.equal(sample.status, 200);
    assert.equal(sample.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(Buffer.from(await sample.arrayBuffer()), demoImage('/demo-images/blue-car.jpg')!.body);
    assert.equal((await fetch(`${origin}/demo-images/removed.jpg`)).status, 404);
    banner = again;
  });
});
