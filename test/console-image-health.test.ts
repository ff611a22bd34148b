import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Loop } from '../src/background/loop.js';
import { createTree, listingBody, type TestApp } from './helpers/app.js';
import {
  type ConsoleSession,
  consoleSession,
  fits,
  go,
  signIn,
  TOKEN_FIELD,
  WIDTHS,
} from './helpers/console.js';
import { checkedListings, IMAGE_TEST_ENV, imageChecker } from './helpers/image-checker.js';
import { type ImageServer, startImageServer } from './helpers/image-server.js';
import { putListing } from './helpers/listings-api.js';
import { ref, writer } from './helpers/write-fixtures.js';

/**
 * The partner page's image health (issue 43; docs/operations.md, "Image health"): the numbers the
 * operator reads at 1366 and 390 px are the truth, as the partner itself reads its listings: its
 * images by state (each URL once), the commonest problems, its active listings that cannot go
 * live and each one's images with their checks.
 */
let app: TestApp;
let images: ImageServer;
let checker: Loop;
let b: ConsoleSession;
let page: Page;
let partner: { id: string; secret: string };
let name: string;
/** The partner's listings as it reads them, every image checked. */
let truth: any[] = [];

before(async () => {
  images = await startImageServer();
  b = await consoleSession({
    // No image here is slow on purpose: a check's time limit is for a machine busy with
    // browsers (at 4 s, a 404 of the local server came back as a timeout under load).
    env: { ...IMAGE_TEST_ENV, IMAGE_CHECK_TIMEOUT_MS: '20000' },
    signIn: false,
    prepare: async (booted) => {
      const tree = await createTree(booted);
      partner = await writer(booted, [tree.ids.A!]);
      name = (await booted.admin('GET', `/partners/${partner.id}`)).name;
      const u = (p: string) => images.url(p);
      const bodies: Record<string, unknown>[] = [
        { images: [u('/photo.jpg?1'), u('/tiny.jpg?1')] },
        { images: [u('/photo.png?1'), u('/missing.jpg?1'), u('/missing.jpg?2')] },
        { images: [u('/missing.jpg?1')] },
        { images: [u('/missing.jpg?2'), u('/page.html?1')] },
        { images: [u('/page.html?1'), u('/wide.png?1')] },
        { images: [u('/missing.jpg?3')] },
        { images: [] },
        { status: 'sold', images: [u('/broken.jpg?1')] },
        { status: 'draft', images: [u('/tiny.jpg?2')] },
      ];
      for (const [i, body] of bodies.entries()) {
        await putListing(booted, partner.secret, ref(`ih${i}`), listingBody(body));
      }
      checker = imageChecker(booted);
      await checker.start();
      truth = await checkedListings(booted, partner.secret);
    },
  });
  ({ app, page } = b);
});
after(async () => {
  await checker?.stop();
  await b?.close();
  await images?.close();
});

const textOf = async (selector: string) => (await page.locator(selector).innerText()).trim();

describe('image health on the partner page', () => {
  test('at 1366 and 390 px the numbers shown are the partner’s own', async () => {
    // The truth, from what the partner reads: each distinct URL once.
    const states = new Map<string, { state: string; code: string | null }>();
    for (const l of truth)
      for (const i of l.images)
        states.set(i.url, { state: i.check.state, code: i.check.problem?.code ?? null });
    const count = (s: string) => [...states.values()].filter((v) => v.state === s).length;
    // Each problem: its images (URLs) and the listings having one; most images, then most listings.
    const problems = new Map<string, { images: number; listings: Set<string> }>();
    for (const v of states.values())
      if (v.code) {
        const p = problems.get(v.code) ?? { images: 0, listings: new Set<string>() };
        p.images += 1;
        problems.set(v.code, p);
      }
    for (const l of truth)
      for (const i of l.images) if (i.check.problem) problems.get(i.check.problem.code)!.listings.add(l.id);
    const commonest = [...problems]
      .sort(
        (a, b) =>
          b[1].images - a[1].images || b[1].listings.size - a[1].listings.size || a[0].localeCompare(b[0]),
      )
      .map(([code, p]) => `${code} ×${p.images}`);
    // missing.jpg ×3, page.html, tiny.jpg ×2, broken.jpg (500), wide.png.
    assert.equal(commonest[0], 'not_found ×3');
    const notLive = truth.filter((l) => l.status === 'active' && !l.readiness.live);
    const active = truth.filter((l) => l.status === 'active');
    assert.equal(notLive.length, 5);

    await page.goto(`${app.url}/console`);
    await page.getByLabel(TOKEN_FIELD).waitFor();
    await signIn(page, app.running.adminToken);
    for (const [width, height] of WIDTHS) {
      await page.setViewportSize({ width, height });
      await go(page, app, `#/partners/${partner.id}`, name);
      const at = `at ${width}px`;
      await page.getByRole('heading', { level: 2, name: 'Image health' }).waitFor();
      assert.equal(await textOf('[data-images="total"]'), String(states.size), at);
      assert.equal(
        await textOf('[data-images="broken"]'),
        String(states.size - count('ok') - count('pending')),
        at,
      );
      for (const s of ['ok', 'pending', 'unreachable', 'not_an_image', 'too_small', 'too_large'])
        assert.equal(await textOf(`[data-images="${s}"]`), String(count(s)), `${s} ${at}`);
      assert.equal(
        await textOf('[data-commonest]'),
        `Commonest problems: ${commonest.slice(0, 5).join(', ')}`,
        at,
      );
      assert.equal(
        await textOf('[data-not-live]'),
        `Active listings that cannot go live: ${notLive.length} of ${active.length}`,
        at,
      );
      const reasons = new Map<string, number>();
      for (const l of notLive)
        for (const r of l.readiness.reasons) reasons.set(r.code, (reasons.get(r.code) ?? 0) + 1);
      assert.equal(
        await textOf('[data-reasons]'),
        `Reasons: ${[...reasons]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .map(([c, n]) => `${c} ×${n}`)
          .join(', ')}`,
        at,
      );
      // Each listing not live, with every image's state as the partner reads it.
      const section = page.locator('[data-image-health]');
      const shown = await section.locator('[data-reference]').allInnerTexts();
      assert.deepEqual(shown, notLive.map((l) => l.externalReference).sort(), at);
      for (const l of notLive) {
        const row = section.getByRole('row').filter({ hasText: l.externalReference });
        const imageStates = await row
          .locator('[data-image-state]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-image-state')));
        assert.deepEqual(
          imageStates,
          l.images.map((i: any) => i.check.state),
          `${l.externalReference} ${at}`,
        );
        for (const r of l.readiness.reasons) assert.match(await row.innerText(), new RegExp(r.code), at);
      }
    }
    await fits(page, 'partner page with image health', {
      heading: name,
      shot: 'image-health',
    });
    assert.deepEqual(b.errors, []);
  });
});
