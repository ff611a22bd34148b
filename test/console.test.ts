import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { bootApp, EXT, type TestApp, unique } from './helpers/app.js';

/**
 * The operator's console at /console, in a real browser (Debian's Chromium driven by
 * playwright-core, as the docs page test does), against the real service over HTTPS: sign in,
 * operators, a dealer tree, a partner, a rotation, traffic with errors, a failed request found by
 * its id, the usage moving; axe-core on every page; a phone-sized screen.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = path.resolve(import.meta.dirname, '..', 'test-results');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let app: TestApp;
before(async () => {
  app = await bootApp();
});
after(() => app.close());

describe('GET /console over HTTP', () => {
  test('the page and its two files are served with a CSP of this origin only; nothing else is', async () => {
    for (const [url, type] of [
      ['/console', /^text\/html/],
      ['/console/console.js', /^text\/javascript/],
      ['/console/console.css', /^text\/css/],
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
    for (const url of ['/console/index.html', '/console/../package.json', '/console/nope.js']) {
      assert.equal((await app.call('GET', url)).status, 404, url);
    }
  });
});

describe('the console in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const origin = new URL(app.url).origin;
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 900 },
    });
    context.setDefaultTimeout(30_000);
    await context.route(
      (url) => url.origin !== origin,
      (route) => route.abort('blockedbyclient'),
    );
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        throw new Error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    page = await context.newPage();
    page.on('console', (m) => {
      // A refused sign-in answers 401 on purpose: the browser logs the failed fetch.
      if (m.type() === 'error' && !/401/.test(m.text())) errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    // The overview refreshes itself; confirm() dialogs are accepted.
    page.on('dialog', (dialog) => void dialog.accept());
  });
  after(async () => {
    await browser?.close();
  });

  /** axe-core on the page as it is now (evaluated through the DevTools protocol, so the CSP stays on). */
  async function accessible(name: string): Promise<void> {
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const result = await (
        window as unknown as {
          axe: {
            run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
          };
        }
      ).axe.run();
      return result.violations.map(
        (v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      );
    });
    assert.deepEqual(violations, [], `${name}: accessibility violations`);
  }

  const go = async (hash: string, heading: string) => {
    await page.goto(`${app.url}/console${hash}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  test('sign in, operators, a dealer tree, a partner, a rotation, traffic, a failed request by id, usage moving', async () => {
    // Sign in: a wrong token is refused with the reason; ADMIN_TOKEN works.
    await page.goto(`${app.url}/console`);
    await accessible('sign-in');
    await page.getByLabel('Operator token (fco_…) or ADMIN_TOKEN').fill(`fco_${'0'.repeat(48)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('not an operator token').waitFor();
    await page.getByLabel('Operator token (fco_…) or ADMIN_TOKEN').fill(app.running.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByText('Signed in as ADMIN_TOKEN').waitFor();
    await accessible('overview');

    // A named operator; then sign in as her.
    const olivia = unique('Olivia');
    await go('#/operators', 'Operators');
    await page.getByLabel('Name of the operator').fill(olivia);
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('.secret code').innerText()).trim();
    assert.match(token, /^fco_[0-9a-f]{48}$/);
    await page.getByRole('cell', { name: olivia }).waitFor();
    await accessible('operators');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Operator token (fco_…) or ADMIN_TOKEN').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(`Signed in as ${olivia}`).waitFor();

    // A dealer tree by import, one more location, and a move.
    const group = unique('GRP');
    const gent = unique('GENT');
    const brugge = unique('BRUGGE');
    await go('#/dealers', 'Dealers');
    await page.getByLabel('JSON: an array of profiles; each may have children (all or nothing)').fill(
      JSON.stringify([
        {
          locationCode: group,
          displayName: 'Console Group',
          children: [{ locationCode: gent, city: 'Gent' }],
        },
      ]),
    );
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('link', { name: gent }).waitFor();
    await page.getByLabel('Location code', { exact: true }).fill(brugge);
    await page.getByLabel('City', { exact: true }).fill('Brugge');
    await page.getByRole('button', { name: 'Create location' }).click();
    await page.getByRole('link', { name: brugge }).waitFor();
    await page.getByRole('searchbox').fill('brugge');
    assert.equal(await page.getByRole('link', { name: gent }).count(), 0, 'search narrows the tree');
    await accessible('dealers');
    await page.getByRole('link', { name: brugge }).click();
    await page.getByRole('heading', { level: 1, name: brugge }).waitFor();
    await page.getByLabel('Parent location code (move it; empty: top level)').fill(group);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await accessible('dealer');
    const moved = (await app.admin('GET', '/dealers')).find(
      (d: { locationCode: string }) => d.locationCode === brugge,
    );
    assert.equal(moved.parent.locationCode, group);

    // A partner restricted to the group, with write scope.
    const name = unique('Acme Console');
    await go('#/partners', 'Partners');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('checkbox', { name: 'write:listings' }).check();
    await page
      .getByLabel('Roots (pick one or more; Ctrl or ⌘ for several)')
      .selectOption({ label: `${group} · Console Group` });
    await page.getByRole('button', { name: 'Create partner' }).click();
    const first = (await page.locator('.secret code').innerText()).trim();
    assert.match(first, /^fc_/);
    await accessible('partners');
    await page.getByRole('link', { name: `Open ${name}` }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();

    const barHeights = () =>
      page.$$eval('svg.chart rect.req', (rects) =>
        rects.reduce((sum, r) => sum + Number(r.getAttribute('height')), 0),
      );
    assert.equal(await barHeights(), 0, 'no traffic yet: no bars');

    // Rotate with an hour of grace: the new secret, and when the old one ends.
    await page.getByLabel('Previous secret keeps working for').selectOption('3600');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('The previous secret keeps working until').waitFor();
    const secret = (await page.locator('.secret code').innerText()).trim();
    assert.notEqual(secret, first);

    // Traffic: two reads, one refused write (its id known), one read with the old secret.
    const failedId = unique('console-failed');
    for (let i = 0; i < 2; i++)
      assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 200);
    const refused = await app.call('PUT', `${EXT}/listings/${unique('ref')}`, {
      secret,
      headers: { 'x-request-id': failedId },
      body: { title: 'Golf', price: 1000, year: 1850, dealerLocationCode: gent },
    });
    assert.equal(refused.status, 422);
    assert.equal((await app.call('GET', `${EXT}/listings?colour=red`, { secret: first })).status, 400);

    // The usage moves on refresh: 4 requests, 2 of them 4xx; the failure is listed with its id.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('[data-total="requests"]', { hasText: '4' }).waitFor();
    assert.equal(await page.locator('[data-total="4xx"]').innerText(), '2');
    assert.ok((await barHeights()) > 0, 'the chart moved: a bar for the traffic');
    await page.getByRole('link', { name: failedId }).waitFor();
    await page.getByRole('cell', { name: 'previous' }).waitFor();
    // The rotation's grace period, and that the partner still sent the previous secret last.
    assert.match(await page.locator('[data-grace]').innerText(), /still used it last/);
    await accessible('partner');
    await page.screenshot({ path: path.join(SHOTS, 'console-partner.png'), fullPage: true });

    // Disable with a reason (shown on the page), then enable again.
    await page.getByLabel('Why (kept with the partner and in the audit log)').fill('Contract ended');
    await page.getByRole('button', { name: 'Disable partner' }).click();
    await page.locator('[data-disabled]', { hasText: 'Disabled: Contract ended.' }).waitFor();
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 401);
    await page.getByRole('button', { name: 'Enable partner' }).click();
    await page.getByRole('button', { name: 'Disable partner' }).waitFor();
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 200);

    // The failed request, found by its id.
    await go('#/requests', 'Requests');
    await page.getByLabel('Request id (X-Request-Id a partner quotes)').fill(failedId);
    await page.getByRole('button', { name: 'Find' }).click();
    const detail = page.locator(`[data-request="${failedId}"]`);
    await detail.waitFor();
    assert.match(await detail.innerText(), /422 VALIDATION_FAILED/);
    assert.match(await detail.innerText(), new RegExp(name));
    assert.match(await detail.innerText(), /year/);
    await accessible('requests');

    // The audit log, with names: Olivia created the partner.
    await go('#/audit', 'Audit log');
    const row = page.getByRole('row').filter({ hasText: 'partner.created' }).filter({ hasText: name });
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(olivia));
    await accessible('audit log');

    await go('#/', 'Overview');
    await page.screenshot({ path: path.join(SHOTS, 'console-overview.png'), fullPage: true });
    assert.deepEqual(errors, [], 'no errors in the browser console');
  });

  test('on a phone-sized screen, nothing is wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [hash, heading] of [
      ['#/', 'Overview'],
      ['#/partners', 'Partners'],
      ['#/requests', 'Requests'],
      ['#/audit', 'Audit log'],
    ] as const) {
      await go(hash, heading);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.ok(overflow <= 1, `${heading}: the page is ${overflow}px wider than the screen`);
    }
    await go('#/partners', 'Partners');
    await page.screenshot({ path: path.join(SHOTS, 'console-phone.png'), fullPage: true });
  });
});
