import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { EXT, type TestApp, unique } from './helpers/app.js';
import { type ConsoleSession, consoleSession, drawn } from './helpers/console.js';

/**
 * Names that deceive (issue 46, point 7): bidirectional overrides and isolates in what partners and
 * operators typed are shown as what they are, never obeyed, in every list and page, in webhook
 * descriptions, in dialogs; a revoked operator's name is not given to another.
 */
let app: TestApp;
let b: ConsoleSession;
let page: Page;

const RLO = '\u202E';
const PDF = '\u202C';
const LRI = '\u2066';
/** Every bidirectional control: embeddings, overrides, isolates, marks. */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

before(async () => {
  b = await consoleSession({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  ({ app, page } = b);
});
after(() => b?.close());

/**
 * Whether `word` is drawn left to right where it appears in `where`'s text: each character's box
 * left of the next one's. An override obeyed draws it right to left.
 */
function drawnInOrder(where: Locator, word: string): Promise<boolean> {
  return where.evaluate((root, w) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = (node.textContent ?? '').indexOf(w);
      if (at < 0) continue;
      const x = (i: number) => {
        const range = document.createRange();
        range.setStart(node, at + i);
        range.setEnd(node, at + i + 1);
        return range.getBoundingClientRect().left;
      };
      for (let i = 0; i + 1 < w.length; i++) if (!(x(i) < x(i + 1))) return false;
      return true;
    }
    throw new Error(`"${w}" is not in the text`);
  }, word);
}

const noRawControls = async (name: string) =>
  assert.doesNotMatch(await page.locator('body').innerText(), BIDI, `${name}: a bidi control is obeyed`);

describe('names that deceive', () => {
  test('overrides and isolates are shown as what they are, in every list, page, description and dialog', async () => {
    const suffix = unique('x');
    const [first, next] = [unique('BIDI-A'), unique('BIDI-B')];
    // An override left open in one dealer's name, the next dealer named after it in a list.
    await app.admin('POST', '/dealers', { locationCode: first, displayName: `Garage ${RLO}Gent` });
    await app.admin('POST', '/dealers', { locationCode: next, displayName: 'Zeta Motors' });
    const dealers = await app.admin('GET', '/dealers');
    const id = (code: string) => dealers.find((d: { locationCode: string }) => d.locationCode === code).id;
    const name = `Invoice ${RLO}gnp.exe${PDF} ${suffix}`;
    const partner = await app.admin('POST', '/partners', {
      name,
      scopes: ['read:listings', 'manage:webhooks'],
      access: { scope: 'restricted', rootProfileIds: [id(first), id(next)] },
    });
    const hook = await app.call('POST', `${EXT}/webhooks`, {
      secret: partner.secret,
      body: { url: 'http://127.0.0.1:9/cars', description: `${LRI}${RLO}exe.oc sync` },
    });
    assert.equal(hook.status, 201, hook.text);

    await page.goto(`${app.url}/console#/partners`);
    await drawn(page, 'Partners');
    const link = page.getByRole('link', { name: new RegExp(`gnp\\.exe.*${suffix}`) });
    assert.match(await link.innerText(), /^Invoice \[U\+202E\]gnp\.exe\[U\+202C\] /);
    assert.ok(await drawnInOrder(link, 'gnp.exe'), 'the partner list draws "gnp.exe", not "exe.png"');
    await noRawControls('partners');

    await link.click();
    await drawn(page, /gnp\.exe/);
    assert.ok(await drawnInOrder(page.locator('h1'), 'gnp.exe'), 'the heading');
    const access = page.locator('[data-access]');
    assert.match(await access.innerText(), /Garage \[U\+202E\]Gent, .* · Zeta Motors/);
    assert.ok(await drawnInOrder(access, 'Zeta Motors'), 'the next dealer is not reversed');
    await noRawControls('a partner');
    // A dialog names the partner too: as shown, not obeyed (the rotation is then made: it asked).
    await page.getByLabel('Previous secret keeps working for').selectOption('0');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('.secret').waitFor();
    assert.match(b.dialogs.at(-1)!, /Invoice \[U\+202E\]gnp\.exe\[U\+202C\]/);
    assert.doesNotMatch(b.dialogs.at(-1)!, BIDI);
    await page.getByRole('link', { name: 'http://127.0.0.1:9/cars' }).click();
    await drawn(page, 'http://127.0.0.1:9/cars');
    const description = page.locator('[data-description]');
    assert.match(await description.innerText(), /^\[U\+2066\]\[U\+202E\]exe\.oc sync$/);
    assert.ok(await drawnInOrder(description, 'exe.oc'), 'a description partners write is not obeyed');
    await noRawControls('a webhook endpoint');

    await page.goto(`${app.url}/console#/dealers`);
    await drawn(page, 'Dealers');
    assert.ok(await drawnInOrder(page.locator('main'), 'Zeta Motors'), 'the dealer tree');
    await noRawControls('dealers');
    await page.goto(`${app.url}/console#/audit`);
    await drawn(page, 'Audit log');
    await noRawControls('audit log');
  });

  test("a revoked operator's name is not given to another: the audit log never shows two as one", async () => {
    const olivia = unique('Olivia');
    await page.goto(`${app.url}/console#/operators`);
    await drawn(page, 'Operators');
    await page.getByLabel('Name of the operator').fill(olivia);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('.secret').waitFor();
    await page.getByRole('button', { name: `Revoke ${olivia}'s token` }).click();
    await page
      .getByRole('row')
      .filter({ hasText: olivia })
      .getByText(/^revoked /)
      .waitFor();
    await page.getByLabel('Name of the operator').fill(olivia.toUpperCase());
    await page.getByRole('button', { name: 'Create token' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'never given to a second operator' });
    await refusal.waitFor();
    assert.match(await refusal.innerText(), new RegExp(`"${olivia}" had a token, revoked at`));
    const named = (await app.admin('GET', '/operators')).filter(
      (o: { name: string }) => o.name.toLowerCase() === olivia.toLowerCase(),
    );
    assert.equal(named.length, 1, 'one operator of that name');
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
