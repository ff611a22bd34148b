import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createPartner, createTree, type TestApp, unique } from './helpers/app.js';
import { accessible, type ConsoleSession, consoleSession, drawn } from './helpers/console.js';

/**
 * A secret shown once (issue 46, point 4): wherever the operator clicked, the new secret is in
 * view, under the header, holds the focus, and is announced; at a computer's width and a phone's.
 */
let app: TestApp;
let b: ConsoleSession;
let page: Page;

before(async () => {
  b = await consoleSession({
    prepare: async (booted) => {
      await createTree(booted);
      // A list long enough that "Create partner" sits far below the page's start.
      for (let i = 0; i < 8; i++) await createPartner(booted, { global: true, name: unique(`Listed ${i}`) });
    },
  });
  ({ app, page } = b);
});
after(() => b?.close());

/** Where the secret titled `title` is: inside the window below the header (when it stays), and focused. */
async function shown(p: Page, title: RegExp) {
  const box = p.locator('.secret').filter({ hasText: title });
  await box.waitFor();
  // Once it is drawn and focused: the page settles after the redraw.
  await p.waitForFunction(() => document.activeElement?.classList.contains('secret'));
  return box.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const header = document.querySelector('header.top') as HTMLElement;
    const sticky = getComputedStyle(header).position === 'sticky';
    return {
      top: r.top,
      bottom: r.bottom,
      below: sticky ? header.getBoundingClientRect().bottom : 0,
      height: window.innerHeight,
      focused: el.contains(document.activeElement),
      role: el.getAttribute('role'),
    };
  });
}

const assertInView = (where: Awaited<ReturnType<typeof shown>>, name: string) => {
  assert.ok(
    where.top >= where.below - 1 && where.bottom <= where.height + 1,
    `${name}: the secret is drawn at ${where.top}–${where.bottom} px, the window shows ${where.below}–${where.height}`,
  );
  assert.ok(where.focused, `${name}: the focus is on the secret`);
  assert.equal(where.role, 'alert', `${name}: the secret is announced`);
};

describe('a secret shown once', () => {
  test('a new partner: its secret in view, focused and announced, not above the form clicked', async () => {
    for (const [width, height] of [
      [1366, 768],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${app.url}/console#/partners`);
      await page.reload();
      await drawn(page, 'Partners');
      const name = unique(`Secret at ${width}`);
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByRole('radio', { name: 'global: every dealer' }).check();
      const scrolled = await page.evaluate(() => window.scrollY);
      await page.getByRole('button', { name: 'Create partner' }).click();
      const where = await shown(page, new RegExp(`API secret of ${name}`));
      assert.ok(scrolled > 300, `the form was ${scrolled} px down the page`);
      assertInView(where, `new partner at ${width}px`);
      assert.equal(await page.locator('.secret').count(), 1, 'one secret on the page');
      await accessible(page, `a new partner's secret at ${width}px`);
    }
  });

  test('a rotated secret and a new operator token: in view and focused, on a phone too', async () => {
    const partner = await createPartner(app, { global: true, name: unique('Rotated') });
    for (const [width, height] of [
      [390, 844],
      [1366, 768],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${app.url}/console#/partners/${partner.id}`);
      await drawn(page, /^Rotated/);
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      assertInView(await shown(page, /New API secret of Rotated/), `rotated at ${width}px`);

      await page.goto(`${app.url}/console#/operators`);
      await drawn(page, 'Operators');
      const operator = unique(`Op ${width}`);
      await page.getByLabel('Name of the operator').fill(operator);
      await page.getByRole('button', { name: 'Create token' }).click();
      assertInView(
        await shown(page, new RegExp(`Operator token of ${operator}`)),
        `operator token at ${width}px`,
      );
    }
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
