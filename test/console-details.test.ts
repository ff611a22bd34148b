import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import { createPartner, createTree, EXT, type TestApp, type Tree, unique } from './helpers/app.js';
import { type ConsoleSession, consoleSession, drawn, filtered } from './helpers/console.js';

/**
 * The smaller things of issue 46 (point 9), each as an operator meets it: a banner that outlived
 * its grace, a name cut without a word, charts at the wrong size or overlapping, an empty chart
 * with an invented scale, times without their zone, filters lost or contradicted, audit rows that
 * leave out what changed, "last used" behind, focus and counts after a filter, links named "1",
 * errors in the API's words.
 */
let app: TestApp;
let tree: Tree;
let b: ConsoleSession;
let page: Page;
/** A partner with traffic: reads, and refused queries. */
let busy: { id: string; secret: string; name: string };

before(async () => {
  b = await consoleSession({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    prepare: async (booted) => {
      tree = await createTree(booted);
      busy = {
        ...(await createPartner(booted, {
          global: true,
          name: unique('Busy Motors'),
          scopes: ['read:listings', 'manage:webhooks'],
        })),
        name: '',
      };
      busy.name = (await booted.admin('GET', `/partners/${busy.id}`)).name;
      for (let i = 0; i < 4; i++) await booted.call('GET', `${EXT}/listings`, { secret: busy.secret });
      for (let i = 0; i < 3; i++)
        await booted.call('GET', `${EXT}/listings?colour=red`, { secret: busy.secret });
    },
  });
  ({ app, page } = b);
});
after(() => b?.close());

const open = async (hash: string, heading: string | RegExp) => {
  await page.goto(`${app.url}/console${hash}`);
  await drawn(page, heading);
};

/** The boxes of `locator`'s matches, as drawn. */
const boxes = (locator: Locator) =>
  locator.evaluateAll((els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, height: r.height };
    }),
  );

describe('the smaller things', () => {
  test('a rotation with no grace takes the grace banner away at once', async () => {
    const p = await createPartner(app, { global: true, name: unique('Banner') });
    await app.admin('POST', `/partners/${p.id}/rotate-secret`, { graceSeconds: 3600 });
    await open(`#/partners/${p.id}`, /^Banner/);
    await page.locator('[data-rotation]').waitFor();
    await page.getByLabel('Previous secret keeps working for').selectOption('0');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('.secret').waitFor();
    assert.equal(await page.locator('[data-rotation]').count(), 0, 'no grace left to show');
  });

  test('a display name over 200 characters is refused in words, never cut', async () => {
    await open('#/dealers', 'Dealers');
    const code = unique('LONGNAME');
    const long = 'Autohuis Vandenberghe en Zonen '.repeat(8).trim();
    assert.ok(long.length > 200);
    await page.getByLabel('Location code', { exact: true }).fill(code);
    await page.getByLabel('Display name', { exact: true }).fill(long);
    assert.equal(
      (await page.getByLabel('Display name', { exact: true }).inputValue()).length,
      long.length,
      'kept whole',
    );
    await page.getByRole('button', { name: 'Create location' }).click();
    const alert = page.locator('form', { hasText: 'New location' }).getByRole('alert');
    assert.match(
      await alert.innerText(),
      new RegExp(`Display name: at most 200 characters \\(this has ${long.length}\\)`),
    );
    const codes = (await app.admin('GET', '/dealers')).map((d: { locationCode: string }) => d.locationCode);
    assert.ok(!codes.includes(code), 'nothing created with a cut name');
  });

  test('charts: redrawn for a new width, labels apart, an empty one says so; times say their zone', async () => {
    await page.setViewportSize({ width: 1366, height: 768 });
    await open(`#/partners/${busy.id}?window=7d`, busy.name);
    for (const width of [1366, 390]) {
      await page.setViewportSize({ width, height: 844 });
      // Redrawn where it is, no reload: the text of the axes stays readable.
      await page.waitForFunction((w) => {
        const svg = document.querySelector('svg.chart');
        return (
          svg && Math.abs(Number(svg.getAttribute('width')) - svg.getBoundingClientRect().width) < 2 && w > 0
        );
      }, width);
      const ticks = await boxes(page.locator('svg.chart text.x-tick'));
      assert.ok(ticks.length >= 2, `${width}px: ${ticks.length} time labels`);
      for (const t of ticks) assert.ok(t.height >= 9, `${width}px: a label ${t.height.toFixed(1)} px high`);
      for (let i = 0; i + 1 < ticks.length; i++)
        assert.ok(ticks[i]!.right + 2 <= ticks[i + 1]!.left, `${width}px: labels ${i} and ${i + 1} overlap`);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    const quiet = await createPartner(app, { global: true, name: unique('Quiet') });
    await open(`#/partners/${quiet.id}`, /^Quiet/);
    const figure = page.locator('figure.chart-box');
    await figure.getByText('No requests in this period.').waitFor();
    assert.deepEqual(await figure.locator('text.y-tick').allTextContents(), [], 'no invented scale');
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    assert.match(await page.locator('[data-time-zone]').innerText(), new RegExp(`Times are in ${zone}`));
  });

  test('the dealer tree keeps each checkbox beside its label on a phone', async () => {
    await app.admin('POST', '/dealers', {
      locationCode: unique('WIDE'),
      parentLocationCode: tree.codes.B,
      displayName: 'Autohuis Vandenberghe-De Smet Occasions en Bedrijfswagens Oost-Vlaanderen',
    });
    await page.setViewportSize({ width: 390, height: 844 });
    await open('#/partners', 'Partners');
    const rows = await page.locator('.picker li').evaluateAll((items) =>
      items.map((li) => {
        const box = li.querySelector(':scope > input')!.getBoundingClientRect();
        const label = li.querySelector(':scope > label')!.getClientRects()[0]!;
        return { box: [box.top, box.bottom, box.right], label: [label.top, label.bottom, label.left] };
      }),
    );
    for (const { box, label } of rows) {
      assert.ok(
        label[0]! < box[1]! && label[1]! > box[0]!,
        `a label's first line beside its box: ${box} / ${label}`,
      );
      assert.ok(
        label[2]! >= box[2]! - 1 && label[2]! - box[2]! < 24,
        `a label right after its box: ${box} / ${label}`,
      );
    }
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  test('failed requests: the filters kept going back, a refusal said alone, focus and count after a filter', async () => {
    await open(`#/requests?partnerId=${busy.id}&status=4xx`, 'Requests');
    await page.locator('main table tbody tr a.mono').first().click();
    await page.locator('[data-request]').waitFor();
    await page.getByRole('link', { name: '← Failed requests' }).click();
    await drawn(page, 'Requests');
    assert.match(page.url(), /status=4xx/);
    assert.equal(await page.getByLabel('Status (429, 4xx, 5xx)').inputValue(), '4xx');

    await open('#/requests?status=abc', 'Requests');
    await page.getByRole('search', { name: 'Filter failed requests' }).getByRole('alert').waitFor();
    assert.equal(
      await page.getByText('No failed requests kept.').count(),
      0,
      'no "none kept" beside a refusal',
    );

    await open('#/requests', 'Requests');
    await page.getByLabel('Status (429, 4xx, 5xx)').fill('4xx');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // The results are drawn, and given the focus.
    await filtered(page, /status=4xx/);
    assert.match(
      await page.locator('[data-results]').innerText(),
      /^Failed requests, newest first: \d+ shown/,
    );
    await page
      .getByRole('status')
      .getByText(/\d+ failed requests? shown/)
      .waitFor();
  });

  test('the audit log says what changed: a rotation with no grace, a new dealer, a move, a webhook', async () => {
    const p = await createPartner(app, { global: true, name: unique('Audited') });
    await app.admin('POST', `/partners/${p.id}/rotate-secret`, { graceSeconds: 0 });
    const code = unique('AUDC');
    const dealer = await app.admin('POST', '/dealers', {
      locationCode: code,
      parentLocationCode: tree.codes.A,
      displayName: 'Garage Noord',
      city: 'Gent',
    });
    await app.admin('PATCH', `/dealers/${dealer.id}`, { parentLocationCode: tree.codes.B });
    const hook = await app.call('POST', `${EXT}/webhooks`, {
      secret: busy.secret,
      body: { url: 'http://127.0.0.1:9/audit' },
    });
    assert.equal(hook.status, 201, hook.text);
    await open('#/audit', 'Audit log');
    const row = (text: string) => page.getByRole('row').filter({ hasText: text }).first();
    assert.match(await row('partner.secret_rotated').innerText(), /the previous secret stopped at once/);
    assert.match(await row('dealer.created').innerText(), /displayName: Garage Noord/);
    assert.match(await row('dealer.created').innerText(), /city: Gent/);
    const moved = await row('dealer.updated').innerText();
    assert.match(moved, new RegExp(`parent: ${tree.codes.A}.* → ${tree.codes.B}`));
    assert.doesNotMatch(moved, /companyName|fullName|; id /, 'the parent by its code, not dumped');
    const created = await row('webhook.created').innerText();
    assert.match(created, /http:\/\/127\.0\.0\.1:9\/audit/);
    assert.doesNotMatch(created, new RegExp(hook.body.data.id), 'no raw endpoint id');
  });

  test('"last used" follows the last request; overview links say what they count; errors in words', async () => {
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: busy.secret })).status, 200);
    await sleep(2500);
    const sent = Date.now();
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: busy.secret })).status, 200);
    const { lastUsedAt } = await app.admin('GET', `/partners/${busy.id}`);
    assert.ok(
      Date.parse(lastUsedAt) >= sent - 50,
      `last used ${lastUsedAt}, the last request at ${new Date(sent).toISOString()}`,
    );
    await open(`#/partners/${busy.id}`, busy.name);
    const shown = await page.evaluate((iso) => new Date(iso).toLocaleString('sv-SE'), lastUsedAt);
    assert.match(await page.locator('[data-last-used]').innerText(), new RegExp(shown));

    await open('#/', 'Overview');
    const bare = page.getByRole('link', { name: /^[\d,]+$/ });
    assert.equal(await bare.count(), 0, `links named by a number only: ${await bare.allInnerTexts()}`);

    await open('#/partners', 'Partners');
    await page.getByLabel('Name', { exact: true }).fill(unique('No roots'));
    await page.getByRole('button', { name: 'Create partner' }).click();
    const refusal = page.locator('form', { hasText: 'New partner' }).getByRole('alert');
    await refusal.waitFor();
    assert.doesNotMatch(await refusal.innerText(), /Too small|expected array|>=/);
    assert.match(await refusal.innerText(), /pick at least one dealer profile/i);

    await open(`#/dealers/${tree.ids.A}`, tree.codes.A!);
    await page.getByLabel('Parent location code (move it; empty: top level)').fill(tree.codes.A1!);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const moveRefusal = page.getByRole('alert');
    await moveRefusal.waitFor();
    assert.doesNotMatch(await moveRefusal.innerText(), /parentId/);
    assert.match(await moveRefusal.innerText(), /Parent location code: /);
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
