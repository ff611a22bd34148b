import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createPartner, createTree, type TestApp, type Tree } from './helpers/app.js';
import { type ConsoleSession, consoleSession, drawn } from './helpers/console.js';

/**
 * A dealer's move (issue 46, point 8): what is saved is what the preview showed. A form changed
 * after its preview is previewed again before anything is saved; the preview is in view on a phone.
 */
let app: TestApp;
let tree: Tree;
let b: ConsoleSession;
let page: Page;

before(async () => {
  b = await consoleSession({
    prepare: async (booted) => {
      tree = await createTree(booted);
    },
  });
  ({ app, page } = b);
});
after(() => b?.close());

const PARENT = 'Parent location code (move it; empty: top level)';

describe('a move previewed, then saved', () => {
  test('a form changed after its preview saves nothing until previewed again; then all of it is saved', async () => {
    const partner = { name: `Sees A ${tree.codes.A}` };
    await createPartner(app, { roots: [tree.ids.A!], name: partner.name });
    await page.goto(`${app.url}/console#/dealers/${tree.ids.A2}`);
    await drawn(page, tree.codes.A2!);
    await page.getByLabel(PARENT).fill(tree.codes.B!);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const impact = page.getByRole('region', { name: 'Move impact' });
    await impact.getByText(`move under ${tree.codes.B}`).waitFor();

    // Another parent typed and the city changed after the preview: that preview no longer holds.
    await page.getByLabel(PARENT).fill(tree.codes.B1!);
    await page.getByLabel('City', { exact: true }).fill('Brugge');
    await impact.getByText('You changed the form after this preview').waitFor();
    assert.equal(await impact.getByRole('button', { name: 'Move and save' }).count(), 0);
    let dealer = await app.admin('GET', `/dealers/${tree.ids.A2}`);
    assert.deepEqual([dealer.parent.id, dealer.city], [tree.ids.A, 'Gent'], 'nothing saved');

    // Previewed again: the new parent; saved: the parent and the city, and said so.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await impact.getByText(`move under ${tree.codes.B1}`).waitFor();
    assert.equal(await impact.locator('[data-loses]').innerText(), partner.name);
    await impact.getByRole('button', { name: 'Move and save' }).click();
    await page.getByRole('status').getByText(`Moved under ${tree.codes.B1} and saved.`).waitFor();
    dealer = await app.admin('GET', `/dealers/${tree.ids.A2}`);
    assert.deepEqual([dealer.parent.id, dealer.city], [tree.ids.B1, 'Brugge']);
  });

  test('on a phone the preview opens in view, its heading focused', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${app.url}/console#/dealers/${tree.ids.A1a}`);
    await drawn(page, tree.codes.A1a!);
    await page.getByLabel(PARENT).fill(tree.codes.B!);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const impact = page.getByRole('region', { name: 'Move impact' });
    await impact.waitFor();
    await page.waitForFunction(() => document.activeElement?.closest('[data-move-impact]') !== null);
    const box = await impact.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { top: r.top, height: window.innerHeight };
    });
    assert.ok(
      box.top >= 0 && box.top < box.height - 100,
      `the preview starts at ${box.top} px of ${box.height}`,
    );
    await page.setViewportSize({ width: 1366, height: 768 });
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
