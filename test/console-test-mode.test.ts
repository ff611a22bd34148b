import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bootApp, createPartner, EXT, listingBody, type TestApp, unique } from './helpers/app.js';
import {
  accessible,
  type ConsoleBrowser,
  drawn,
  fits,
  openBrowser,
  signIn,
  TOKEN_FIELD,
} from './helpers/console.js';
import { startReceiver } from './helpers/webhook-receiver.js';

/**
 * What the console shows of test mode (docs/test-mode.md): whether a partner holds a test secret,
 * which failed requests were made with it, which webhook endpoints were registered with it.
 */
let app: TestApp;
let b: ConsoleBrowser;
const receiver = await startReceiver();

before(async () => {
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  b = await openBrowser(app);
  await b.page.goto(`${app.url}/console`);
  await b.page.getByLabel(TOKEN_FIELD).waitFor();
  await signIn(b.page, app.running.adminToken);
});
after(async () => {
  await b?.browser.close();
  await app?.close();
  await receiver.close();
});

/** Opens the page afresh (a reload: going to the hash already shown would not draw it again). */
const open = async (hash: string, heading: string | RegExp) => {
  await b.page.goto(`${app.url}/console${hash}`);
  await b.page.reload();
  await drawn(b.page, heading);
};

test('an operator issues a test secret (shown once, focused, announced) and revokes it', async () => {
  const name = unique('Console test');
  const partner = await createPartner(app, { global: true, name, scopes: ['read:listings'] });
  await open(`#/partners/${partner.id}`, name);
  await b.page.getByRole('button', { name: 'Issue test secret' }).click();
  const box = b.page.locator('.secret').filter({ hasText: `Test secret of ${name}` });
  await box.waitFor();
  await b.page.waitForFunction(() => document.activeElement?.classList.contains('secret'));
  assert.equal(await box.getAttribute('role'), 'alert');
  const secret = (await box.locator('code').innerText()).trim();
  assert.match(secret, /^fc_test_/);
  assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 200);
  assert.match(await b.page.locator('[data-test-secret]').innerText(), /^issued /);

  await b.page.getByRole('button', { name: 'Revoke test secret' }).click();
  await b.page.getByRole('button', { name: 'Issue test secret' }).waitFor();
  assert.equal(await b.page.locator('[data-test-secret]').innerText(), 'none');
  assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 401);
  assert.match(b.dialogs.at(-1) ?? '', /Revoke .* test secret\?/, 'revoking asked first');
});

test('the partner page, failed requests and webhook endpoints mark test mode', async () => {
  const name = unique('Tester');
  const partner = await createPartner(app, {
    global: true,
    name,
    scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
  });
  await open(`#/partners/${partner.id}`, name);
  assert.equal(await b.page.locator('[data-test-secret]').innerText(), 'none');
  const { secret } = await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`);
  await open(`#/partners/${partner.id}`, name);
  assert.match(await b.page.locator('[data-test-secret]').innerText(), /^issued /);

  const refused = await app.call('GET', `${EXT}/listings?colour=red`, { secret });
  assert.equal(refused.status, 400);
  await open(`#/requests?partnerId=${partner.id}`, 'Requests');
  assert.match(await b.page.locator('table').innerText(), /current \(test\)/);
  // Usage counts the test request apart from live traffic (migration 028).
  await open(`#/partners/${partner.id}`, name);
  assert.match(await b.page.locator('[data-test-total="requests"]').innerText(), /\b1\b/);
  assert.match(await b.page.locator('[data-test-total="4xx"]').innerText(), /\b1\b/);
  assert.match(await b.page.locator('[data-total="requests"]').innerText(), /\b0\b/);
  // And over time: the test chart draws the refused request (a bar, its error on top); the live
  // chart, drawn first on the page, has nothing to draw.
  const testChart = b.page.locator('[data-test-chart] figure.chart-box');
  assert.match(
    (await testChart.locator('svg').getAttribute('aria-label')) ?? '',
    /^Test requests and errors of /,
  );
  assert.equal(await testChart.locator('rect.err').count(), 1);
  assert.equal(await testChart.getByText('No requests in this period.').count(), 0);
  const liveChart = b.page.locator('figure.chart-box').first();
  await liveChart.getByText('No requests in this period.').waitFor();
  assert.equal(await liveChart.locator('rect.err').count(), 0);

  const hook = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url: receiver.url } });
  assert.equal(hook.status, 201, hook.text);
  const live = await app.call('POST', `${EXT}/webhooks`, {
    secret: partner.secret,
    body: { url: receiver.url },
  });
  assert.equal(live.status, 201, live.text);
  await open(`#/partners/${partner.id}`, name);
  await b.page.locator('[data-test-endpoint]').waitFor();
  assert.equal(await b.page.locator('[data-test-endpoint]').count(), 1, 'the live endpoint is not marked');
});

test('the partner page shows what it tried in test: a checklist that says what is missing', async () => {
  const name = unique('Trier');
  const partner = await createPartner(app, {
    global: true,
    name,
    scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
  });
  const { secret } = await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`);
  await open(`#/partners/${partner.id}`, name);
  const sign = (key: string) => b.page.locator(`[data-tried="${key}"]`);
  assert.equal(await sign('written').getAttribute('data-done'), 'no');
  assert.match(
    await b.page.locator('[data-tried-verdict]').innerText(),
    /^Not tried in test yet: wrote listings;/,
  );

  // Two writes and a sync walk in test: those signs done, the webhook still missing.
  const dealer = await app.admin<{ locationCode: string }>('POST', '/dealers', {
    locationCode: unique('TRY'),
  });
  for (const reference of ['try-1', 'try-2']) {
    const written = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret,
      body: listingBody({ dealerLocationCode: dealer.locationCode }),
    });
    assert.equal(written.status, 201, written.text);
  }
  const first = await app.call('GET', `${EXT}/listings?pageSize=1`, { secret });
  const cursor = encodeURIComponent(first.body.pagination.nextCursor);
  assert.equal(
    (await app.call('GET', `${EXT}/listings?pageSize=1&cursor=${cursor}`, { secret })).status,
    200,
  );
  await open(`#/partners/${partner.id}`, name);
  assert.equal(await sign('written').getAttribute('data-done'), 'yes');
  assert.match(await sign('written').innerText(), /Wrote listings: 2 writes, last /);
  assert.equal(await sign('synced').getAttribute('data-done'), 'yes');
  assert.equal(await sign('webhooksReceived').getAttribute('data-done'), 'no');
  assert.equal(
    await b.page.locator('[data-tried-verdict]').innerText(),
    'Not tried in test yet: received a webhook (answered 2xx).',
  );
  assert.equal(await b.page.locator('[data-test-listings]').innerText(), 'Holds 2 test listings now.');
  await fits(b.page, 'tried in test', { heading: name, shot: 'tried-in-test' });
  await accessible(b.page, 'tried in test');
});
