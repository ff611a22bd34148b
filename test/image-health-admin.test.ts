import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Loop } from '../src/background/loop.js';
import { bootApp, createTree, EXT, listingBody, type TestApp, type Tree } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { putListing } from './helpers/listings-api.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * GET /api/admin/v1/partners/{id}/image-health (docs/operations.md, "Image health"): a partner's
 * images by state, the commonest problems, and its active listings that cannot go live, each with
 * its reasons and every image's check as the partner reads them. Listings written through the API
 * with images on a local image server, checked by the checker. Runs on PGlite, and on PostgreSQL
 * when DATABASE_URL is set.
 */
let app: TestApp;
let images: ImageServer;
let tree: Tree;
let partner: { id: string; secret: string };
let other: { id: string; secret: string };
let checker: Loop;
const ids: Record<string, string> = {};

before(async () => {
  images = await startImageServer();
  app = await bootApp(IMAGE_TEST_ENV);
  tree = await createTree(app);
  partner = await writer(app, [tree.ids.A!]);
  other = await writer(app, [tree.ids.A!]);
  checker = imageChecker(app);
});
after(async () => {
  await checker.stop();
  await app.close();
  await images.close();
});

/** Every listing of a partner as it reads them. */
async function readAll(secret: string): Promise<any[]> {
  const reply = await app.call('GET', `${EXT}/listings?status=all&mine=true&pageSize=100`, { secret });
  assert.equal(reply.status, 200, reply.text);
  return reply.body.data;
}

describe('image health of a partner', () => {
  test('before any check: every image pending, none broken, every active listing waiting', async () => {
    const url = images.url('/photo.jpg?early');
    const id = await putListing(app, partner.secret, ref('early'), listingBody({ images: [url] }));
    const health = await app.admin('GET', `/partners/${partner.id}/image-health`);
    assert.deepEqual(health.images, {
      total: 1,
      broken: 0,
      byState: { pending: 1, ok: 0, not_an_image: 0, too_small: 0, too_large: 0, unreachable: 0 },
    });
    assert.deepEqual(health.problems, []);
    assert.deepEqual(health.listings, {
      total: 1,
      active: 1,
      notLive: 1,
      reasons: [{ code: 'images_pending', listings: 1 }],
    });
    assert.deepEqual(
      health.notLive.map((l: any) => [l.id, l.readiness.reasons.map((r: any) => r.code)]),
      [[id, ['images_pending']]],
    );
    ids.early = id;
  });

  test('after the checks: counts by state, the commonest problems first, and the listings not live as the partner reads them', async () => {
    const u = (p: string) => images.url(p);
    const put = async (name: string, body: Record<string, unknown>, who = partner) => {
      ids[name] = await putListing(app, who.secret, ref(name), listingBody(body));
    };
    await put('live', { images: [u('/photo.jpg?a'), u('/tiny.jpg?a')] });
    await put('gone', { images: [u('/missing.jpg?a')] });
    await put('page', { images: [u('/page.html?a'), u('/missing.jpg?b')] });
    await put('sold', { status: 'sold', images: [u('/missing.jpg?a')] });
    await put('bare', { images: [] });
    // Another partner's broken image, on the same dealer: not this partner's.
    await put('theirs', { images: [u('/missing.jpg?theirs'), u('/page.html?theirs')] }, other);
    await checker.start();
    let mine: any[] = [];
    await eventually(
      async () => {
        mine = await readAll(partner.secret);
        const theirs = await readAll(other.secret);
        return [...mine, ...theirs].every((l) => l.images.every((i: any) => i.check.state !== 'pending'));
      },
      () => JSON.stringify(mine.map((l) => l.images)),
    );

    const health = await app.admin('GET', `/partners/${partner.id}/image-health`);
    // The truth, from what the partner reads: each distinct URL once.
    const states = new Map<string, string>();
    for (const l of mine) for (const i of l.images) states.set(i.url, i.check.state);
    const count = (state: string) => [...states.values()].filter((s) => s === state).length;
    assert.deepEqual(health.images, {
      total: states.size,
      broken: states.size - count('ok') - count('pending'),
      byState: {
        pending: count('pending'),
        ok: count('ok'),
        not_an_image: count('not_an_image'),
        too_small: count('too_small'),
        too_large: count('too_large'),
        unreachable: count('unreachable'),
      },
    });
    assert.equal(health.images.total, 6);
    assert.equal(health.images.broken, 4);
    // missing.jpg?a is in two listings (gone, sold), ?b in one: 404 ×2 in 3 listings comes first.
    assert.deepEqual(health.problems, [
      { state: 'unreachable', code: 'not_found', images: 2, listings: 3 },
      { state: 'not_an_image', code: 'html_page', images: 1, listings: 1 },
      { state: 'too_small', code: 'too_small', images: 1, listings: 1 },
    ]);
    const activeNotLive = mine.filter((l) => l.status === 'active' && !l.readiness.live);
    assert.deepEqual(health.listings, {
      total: mine.length,
      active: mine.filter((l) => l.status === 'active').length,
      notLive: activeNotLive.length,
      reasons: [
        { code: 'no_working_image', listings: 2 },
        { code: 'no_images', listings: 1 },
      ],
    });
    assert.deepEqual(health.notLive.map((l: any) => l.id).sort(), [ids.gone, ids.page, ids.bare].sort());
    // Each exactly as the partner reads it: its title, reasons and every image's check.
    for (const shown of health.notLive) {
      const read = mine.find((l) => l.id === shown.id);
      assert.deepEqual(shown, {
        id: read.id,
        externalReference: read.externalReference,
        title: read.title,
        readiness: read.readiness,
        images: read.images,
      });
    }
    // By reference, and no more than asked for.
    const refs = health.notLive.map((l: any) => l.externalReference);
    assert.deepEqual(refs, [...refs].sort());
    const one = await app.admin('GET', `/partners/${partner.id}/image-health?limit=1`);
    assert.deepEqual(one.notLive, health.notLive.slice(0, 1));
    assert.equal(one.listings.notLive, 3);

    // The other partner sees only its own.
    const theirs = await app.admin('GET', `/partners/${other.id}/image-health`);
    assert.equal(theirs.images.total, 2);
    assert.deepEqual(
      theirs.problems.map((p: any) => `${p.code} ×${p.images}`),
      ['html_page ×1', 'not_found ×1'],
    );
  });

  test('an unknown partner is 404; a limit that is not a positive integer is 400', async () => {
    const unknown = await app.call(
      'GET',
      '/api/admin/v1/partners/00000000-0000-4000-8000-000000000000/image-health',
      {
        headers: { authorization: `Bearer ${app.running.adminToken}` },
      },
    );
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.code, 'NOT_FOUND');
    const bad = await app.call('GET', `/api/admin/v1/partners/${partner.id}/image-health?limit=0`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(bad.status, 400, bad.text);
    const anonymous = await app.call('GET', `/api/admin/v1/partners/${partner.id}/image-health`);
    assert.equal(anonymous.status, 401);
  });
});
