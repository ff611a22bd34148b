import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { bootApp, EXT, type TestApp, unique } from './helpers/app.js';
import { accessible as axeFinds, type ConsoleBrowser, openBrowser, TOKEN_FIELD } from './helpers/console.js';

/**
 * The operator's console at /console: its files as served, and in a real browser what is not one
 * task of the day (console-first-day.test.ts has those): a refused token, loading, errors said
 * once, the charts' axes and values, every screen's width with long names.
 */
let app: TestApp;
before(async () => {
  app = await bootApp();
});
after(() => app.close());

describe('GET /console over HTTP', () => {
  test('the page and its files are served with a CSP of this origin only; nothing else is', async () => {
    for (const [url, type] of [
      ['/console', /^text\/html/],
      // With the slash (typed or bookmarked): the console too, never a 404 in JSON.
      ['/console/', /^text\/html/],
      ['/console/console.js', /^text\/javascript/],
      ['/console/console.css', /^text\/css/],
      ['/console/favicon.svg', /^image\/svg\+xml/],
      ['/console/views/partner.js', /^text\/javascript/],
    ] as const) {
      const res = await app.call('GET', url);
      assert.equal(res.status, 200, url);
      assert.match(String(res.headers['content-type']), type, url);
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/, url);
      assert.match(csp, /script-src 'self'/, url);
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    }
    for (const url of [
      '/console/index.html',
      '/console/../package.json',
      '/console/nope.js',
      '/console/tsconfig.json',
      '/console/views/..%2Fconsole.js',
      '/console/views/nope.js',
    ]) {
      assert.equal((await app.call('GET', url)).status, 404, url);
    }
  });
});

describe('the console in headless Chromium', () => {
  let b: ConsoleBrowser;
  let context: BrowserContext;
  let page: Page;
  /** A partner with traffic: 5 reads and 2 refused: the chart test reads its page. */
  let partnerUrl = '';
  const partnerName = unique('Acme Console');

  before(async () => {
    b = await openBrowser(app);
    ({ context, page } = b);
    const created = await app.admin<{ id: string; secret: string }>('POST', '/partners', {
      name: partnerName,
      access: { scope: 'global' },
    });
    for (let i = 0; i < 5; i++)
      assert.equal((await app.call('GET', `${EXT}/listings`, { secret: created.secret })).status, 200);
    for (let i = 0; i < 2; i++)
      assert.equal(
        (await app.call('GET', `${EXT}/listings?colour=red`, { secret: created.secret })).status,
        400,
      );
    partnerUrl = `${app.url}/console#/partners/${created.id}`;
  });
  after(async () => {
    await b?.browser.close();
  });

  const accessible = (name: string) => axeFinds(page, name);
  const go = async (hash: string, heading: string) => {
    await page.goto(`${app.url}/console${hash}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  const signIn = async (token: string) => {
    await page.getByLabel(TOKEN_FIELD).fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in as').waitFor();
  };

  /** Each test below starts signed in with ADMIN_TOKEN, whatever the one before left. */
  const signedIn = async () => {
    await page.goto(`${app.url}/console#/`);
    await page.getByLabel(TOKEN_FIELD).or(page.getByText('Signed in as')).first().waitFor();
    if (await page.getByLabel(TOKEN_FIELD).isVisible()) await signIn(app.running.adminToken);
  };

  test('a refused token signs the operator out with the reason, on the next click and on a reload', async () => {
    const revoked = await app.admin<{ id: string; token: string }>('POST', '/operators', {
      name: unique('Revoked'),
    });
    await signedIn();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(TOKEN_FIELD).waitFor();
    // Signed out: no literal "null", no section links, the token field the second Tab (it was the 8th).
    assert.doesNotMatch(await page.locator('main').innerText(), /\bnull\b/);
    assert.equal(await page.getByRole('navigation', { name: 'Sections' }).isVisible(), false);
    await page.goto(`${app.url}/console`);
    await page.getByLabel(TOKEN_FIELD).waitFor();
    assert.doesNotMatch(await page.locator('main').innerText(), /\bnull\b/, 'no "null" on a first load');
    let tabs = 0;
    while (tabs < 10) {
      await page.keyboard.press('Tab');
      tabs++;
      if ((await page.evaluate(() => document.activeElement?.getAttribute('name'))) === 'token') break;
    }
    assert.ok(tabs <= 2, `${tabs} Tabs to reach the token field`);
    await accessible('sign-in, first load');

    await signIn(revoked.token);
    await go('#/partners', 'Partners');
    await app.admin('DELETE', `/operators/${revoked.id}`);
    // The next click: the sign-in form, saying why (the page stayed, "Signed in as …").
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Dealers' }).click();
    const said = page.locator('[data-signin-message]');
    await said.getByText('The service refused your token').waitFor();
    assert.match(await said.innerText(), /revoked, or the service restarted with a new ADMIN_TOKEN/);
    assert.equal(await page.getByText('Signed in as').count(), 0);
    assert.equal(await page.getByRole('navigation', { name: 'Sections' }).isVisible(), false);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'the refused token is forgotten');
    await accessible('sign-in, token refused');
    // A reload with a token the service no longer knows (a new ADMIN_TOKEN after a restart looks the
    // same): the form and the reason, not "Loading…" for ever.
    await page.evaluate((token) => sessionStorage.setItem('forecourt.operatorToken', token), revoked.token);
    await page.reload();
    await said.getByText('The service refused your token').waitFor();
    await page.getByLabel(TOKEN_FIELD).waitFor();
    await signIn(app.running.adminToken);
  });

  test('loading, the import counts, errors said once, a new partner listed at once, the header in view', async () => {
    // A tree longer than the screen: the header must stay in view down it.
    await app.admin('POST', '/dealers/import', {
      dealers: [
        {
          locationCode: unique('TALL'),
          children: Array.from({ length: 40 }, (_, i) => ({ locationCode: unique(`TALL-${i}`) })),
        },
      ],
    });
    await signedIn();
    await page.setViewportSize({ width: 1366, height: 768 });
    await go('#/', 'Overview');
    // A slow answer: the old page gives way to "Loading…" at once (it stayed under the new link).
    // The answer is held until the test has seen that, then let through.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/admin/v1/dealers', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Dealers' }).click();
    await page.locator('main').getByText('Loading…').waitFor();
    assert.equal(await page.getByRole('heading', { level: 1, name: 'Overview' }).count(), 0);
    release();
    await page.getByRole('heading', { level: 1, name: 'Dealers' }).waitFor();
    await page.unroute('**/api/admin/v1/dealers');

    // The import's counts (it said "0 created" after creating two).
    const group = unique('IMP');
    await page
      .getByLabel('JSON: an array of profiles; each may have children (all or nothing)')
      .fill(JSON.stringify([{ locationCode: group, children: [{ locationCode: unique('IMP-A') }] }]));
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').getByText('Imported: 2 created, 0 updated, 0 unchanged.').waitFor();

    // A refused location: said once, in words, beside its form; the import's message is gone.
    await page.getByLabel('Location code', { exact: true }).fill(group);
    await page.getByRole('button', { name: 'Create location' }).click();
    const createAlert = page.locator('form', { hasText: 'New location' }).getByRole('alert');
    await createAlert.getByText(`Location code "${group}" is already in use`).waitFor();
    assert.doesNotMatch(await createAlert.innerText(), /CONFLICT/);
    assert.equal(await page.getByText('Imported:').count(), 0, 'no old success beside a new error');
    // A refused tree: each field once, by its name in the form (it was the code, then the message,
    // then the same issue again).
    await page
      .getByLabel('JSON: an array of profiles; each may have children (all or nothing)')
      .fill(JSON.stringify([{ locationCode: unique('IMP-B'), children: [{ city: 'Gent' }] }]));
    await page.getByRole('button', { name: 'Import' }).click();
    const importAlert = page.locator('form', { hasText: 'Import a tree' }).getByRole('alert');
    await importAlert.waitFor();
    const said = await importAlert.innerText();
    assert.doesNotMatch(said, /VALIDATION_FAILED|Invalid body/);
    assert.match(said, /profile 1 › child 1 › Location code/);
    assert.equal(said.match(/location ?code/gi)?.length, 1, said);
    await accessible('dealers with errors');

    // The header stays in view down a long page, and a new page starts at its top.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    assert.ok((await page.evaluate(() => window.scrollY)) > 100, 'the page is longer than the screen');
    assert.equal((await page.locator('header.top').boundingBox())?.y, 0, 'the header is in view');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Partners' }).click();
    await page.getByRole('heading', { level: 1, name: 'Partners' }).waitFor();
    assert.equal(await page.evaluate(() => window.scrollY), 0);

    // A new partner is in the list at once (it was missing until the operator went elsewhere).
    const name = unique('Listed at once');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('radio', { name: 'global: every dealer' }).check();
    await page.getByRole('button', { name: 'Create partner' }).click();
    await page.locator('.secret code').waitFor();
    await page.getByRole('cell', { name, exact: true }).waitFor();
    await accessible('partners with a new one');

    // The page declares its icon, and it is served (each load asked for /favicon.ico: a 404).
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    assert.equal(icon, '/console/favicon.svg');
    assert.equal((await page.request.get(`${app.url}${icon}`)).status(), 200);
  });

  /** Points at the plot's last bucket, just inside its right edge (the chart's padding is 10 px). */
  async function hoverLastBucket(figure: Locator) {
    const plot = figure.locator('svg');
    const box = (await plot.boundingBox())!;
    await plot.hover({ position: { x: box.width - 13, y: box.height / 2 } });
  }

  test('charts with a time axis, a value scale, and the values on hover and on focus', async () => {
    await signedIn();
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(partnerUrl);
    const figure = page.locator('figure.chart-box');
    await figure.waitFor();
    const ticks = (kind: string) => figure.locator(`svg text.${kind}`).allTextContents();
    const times = await ticks('x-tick');
    assert.ok(times.length >= 4, `time axis: ${times.join(', ')}`);
    assert.ok(
      times.every((t) => /\d\d:\d\d/.test(t)),
      times.join(', '),
    );
    const values = (await ticks('y-tick')).map((t) => Number(t.replaceAll(',', '')));
    assert.equal(values[0], 0);
    assert.ok(values.at(-1)! >= 6, `value scale: ${values.join(', ')}`);
    // Hover the bar of the last hour: its values.
    const readout = figure.locator('.readout');
    const counts = (text: string) => {
      const match = /^\d\d:\d\d–\d\d:\d\d: (\d+) requests?, (\d+) 4xx, (\d+) 5xx$/.exec(text);
      assert.ok(match, `the readout: ${text}`);
      return match.slice(1).map(Number);
    };
    await hoverLastBucket(figure);
    const hovered = await readout.innerText();
    counts(hovered);
    // The keyboard: focus picks the last hour, ← the one before.
    await figure.locator('svg').focus();
    const last = await readout.innerText();
    assert.equal(last, hovered);
    await page.keyboard.press('ArrowLeft');
    const before = await readout.innerText();
    assert.notEqual(before, last);
    // The partner's 7 requests, 2 of them refused, are in the last hour; or, when an hour began
    // between the first of them and this reading, in the last two.
    const [inLast, inBefore] = [counts(last), counts(before)];
    assert.deepEqual(
      inLast.map((n, i) => n + inBefore[i]!),
      [7, 2, 0],
      `${last} / ${before}`,
    );
    await accessible('partner chart focused');

    await go('#/', 'Overview');
    const minutes = await page.locator('figure.chart-box svg text.x-tick').allTextContents();
    assert.ok(minutes.length >= 4, `overview time axis: ${minutes.join(', ')}`);
    // The last minute may have no request yet (a bar of height 0 cannot be pointed at): the chart
    // reads the bucket under the pointer wherever it is in the plot.
    await hoverLastBucket(page.locator('figure.chart-box'));
    assert.match(await page.locator('figure.chart-box .readout').innerText(), /\d+ requests?, \d+ 4xx/);
  });

  test('no screen is wider than the window, at 1366 × 768 and at 390 × 844; tables fit at 1366', async () => {
    await signedIn();
    // Long names: a dealer's in the roots list, a partner's in its table and heading.
    const longDealer = await app.admin<{ id: string }>('POST', '/dealers', {
      locationCode: unique('LONG'),
      displayName: 'Autohuis Vandenberghe-De Smet Occasions en Bedrijfswagens Oost-Vlaanderen Gent-Zuid NV',
    });
    const longPartner = await app.admin<{ id: string }>('POST', '/partners', {
      name: `Autoverkoop-Vlaanderen-Occasions-Integratie-Platform-Productie-${unique('x')}`,
      access: { scope: 'global' },
    });
    const [failed] = await app.admin<{ requestId: string }[]>('GET', '/requests?pageSize=1');
    const screens = [
      ['#/', 'Overview'],
      ['#/partners', 'Partners'],
      [`#/partners/${longPartner.id}`, /^Autoverkoop/],
      [new URL(partnerUrl).hash, /^Acme Console/],
      ['#/webhooks', 'Webhooks'],
      ['#/dealers', 'Dealers'],
      [`#/dealers/${longDealer.id}`, /^LONG/],
      [`#/requests/${encodeURIComponent(failed!.requestId)}`, 'Requests'],
      ['#/audit', 'Audit log'],
      ['#/operators', 'Operators'],
    ] as const;
    const signedOut = await context.newPage();
    for (const [width, height] of [
      [1366, 768],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await signedOut.setViewportSize({ width, height });
      const check = async (p: Page, name: string) => {
        const {
          page: over,
          tables,
          ids,
        } = await p.evaluate(() => ({
          page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          tables: [...document.querySelectorAll('.table-wrap')].map((t) => t.scrollWidth - t.clientWidth),
          ids: [...document.querySelectorAll('td .mono')].map((id) => id.getBoundingClientRect().height),
        }));
        assert.ok(over <= 1, `${name} at ${width}px: the page is ${over}px wider than the window`);
        // An id in a table is one line (request ids wrapped into stacks of 6 lines).
        assert.ok(
          ids.every((height) => height < 30),
          `${name} at ${width}px: ids ${ids.join(', ')}px high`,
        );
        // On a computer, tables fit (the failures table was 1323 px in a 1070 px box); on a phone
        // they may scroll inside their own box.
        if (width >= 1366)
          assert.ok(
            tables.every((t) => t <= 1),
            `${name} at ${width}px: a table is wider than its box by ${tables.join(', ')}px`,
          );
      };
      for (const [hash, heading] of screens) {
        await page.goto(`${app.url}/console${hash}`);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await page.locator('main[aria-busy]').waitFor({ state: 'detached' });
        await check(page, hash);
      }
      // With the slash, as typed or bookmarked: the console all the same.
      await signedOut.goto(`${app.url}/console/`);
      await signedOut.getByLabel(TOKEN_FIELD).waitFor();
      await check(signedOut, 'sign-in');
    }
    await signedOut.close();
  });
});
