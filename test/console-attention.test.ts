import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { bootApp, createPartner, EXT, listingBody, type TestApp, unique } from './helpers/app.js';
import { type ConsoleBrowser, drawn, fits, openBrowser, signIn, TOKEN_FIELD } from './helpers/console.js';
import { eventually } from './helpers/eventually.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * The overview (issue 46, points 3 and 6): it says what needs an operator, each with a link to it,
 * and it comes back by itself after the service did not answer.
 */
let app: TestApp;
let receiver: Receiver;
let b: ConsoleBrowser;
let page: Page;

before(async () => {
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' });
  receiver = await startReceiver({ failRate: 1 });
  b = await openBrowser(app);
  page = b.page;
});
after(async () => {
  await b?.browser.close();
  await receiver?.close();
  await app?.close();
});

const get = (secret: string, query = '') => app.call('GET', `${EXT}/listings${query}`, { secret });

describe('the overview', () => {
  test('"Needs attention" lists failing partners, graces about to cut one off, retired secrets, failing and disabled webhooks', async () => {
    // 12 of 18 requests refused.
    const erring = await createPartner(app, { global: true, name: unique('Erring Cars') });
    for (let i = 0; i < 6; i++) assert.equal((await get(erring.secret)).status, 200);
    for (let i = 0; i < 12; i++) assert.equal((await get(erring.secret, '?colour=red')).status, 400);
    // A grace of an hour, the partner still on its previous secret; another that moved (not listed).
    const stuck = await createPartner(app, { global: true, name: unique('Stuck Cars') });
    await app.admin('POST', `/partners/${stuck.id}/rotate-secret`, { graceSeconds: 3600 });
    assert.equal((await get(stuck.secret)).status, 200);
    const moved = await createPartner(app, { global: true, name: unique('Moved Cars') });
    const fresh = await app.admin('POST', `/partners/${moved.id}/rotate-secret`, { graceSeconds: 3600 });
    assert.equal((await get(fresh.secret)).status, 200);
    // A retired secret still tried.
    const retired = await createPartner(app, { global: true, name: unique('Retired Cars') });
    await app.admin('POST', `/partners/${retired.id}/rotate-secret`, { graceSeconds: 0 });
    assert.equal((await get(retired.secret)).status, 401);
    // A webhook endpoint failing (its receiver answers 500), another disabled by an operator.
    const hooked = await createPartner(app, {
      global: true,
      name: unique('Hooked Cars'),
      scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
    });
    const dealer = await app.admin('POST', '/dealers', { locationCode: unique('ATT') });
    const failing = await app.call('POST', `${EXT}/webhooks`, {
      secret: hooked.secret,
      body: { url: receiver.url },
    });
    assert.equal(failing.status, 201, failing.text);
    receiver.secrets.push(failing.body.data.secret);
    const held = await app.call('POST', `${EXT}/webhooks`, {
      secret: hooked.secret,
      body: { url: `${receiver.url}/held` },
    });
    await app.admin('POST', `/webhooks/${held.body.data.id}/disable`, { reason: 'Answers slowly' });
    const written = await app.call('PUT', `${EXT}/listings/${unique('att')}`, {
      secret: hooked.secret,
      body: listingBody({ dealerLocationCode: dealer.locationCode }),
    });
    assert.ok(written.status < 300, written.text);
    await eventually(
      async () => Boolean((await app.admin('GET', `/webhooks/${failing.body.data.id}`)).failingSince),
      () => `receiver saw ${receiver.requests.length} requests`,
    );

    await page.goto(`${app.url}/console`);
    await page.getByLabel(TOKEN_FIELD).waitFor();
    await signIn(page, app.running.adminToken);
    await drawn(page, 'Overview');
    const list = page.getByRole('region', { name: 'Needs attention' });
    const item = (text: string | RegExp) => list.getByRole('listitem').filter({ hasText: text });
    const names = async () => (await list.innerText()).split('\n');
    await item(/Erring Cars/).waitFor();
    assert.match(
      await item(/Erring Cars/).innerText(),
      /Erring Cars-\w+: 12 of 18 requests failed in the last hour \(67%\)/,
    );
    assert.match(
      await item(/Stuck Cars/).innerText(),
      /Stuck Cars-\w+ has not moved to its new secret; the previous one stops at .+ \(in (5\d|60) minutes\)/,
    );
    assert.match(
      await item(/Retired Cars/).innerText(),
      /Retired Cars-\w+: a retired secret was tried 1 time/,
    );
    assert.match(
      await item(new RegExp(`${receiver.url} `)).innerText(),
      /deliveries failing since .+ \(Hooked Cars-\w+\)/,
    );
    assert.match(
      await item(/\/held/).innerText(),
      /disabled by the operator: Answers slowly \(Hooked Cars-\w+\)/,
    );
    assert.equal(await item(/Moved Cars/).count(), 0, `a partner that moved is fine: ${await names()}`);
    // Each names where to look: the partner, its failed requests, the endpoint.
    await item(/Erring Cars/)
      .getByRole('link', { name: /Erring Cars/ })
      .waitFor();
    assert.match(
      String(
        await item(/Erring Cars/)
          .getByRole('link', { name: 'its failed requests' })
          .getAttribute('href'),
      ),
      new RegExp(`#/requests\\?partnerId=${erring.id}`),
    );
    await item(/\/held/)
      .getByRole('link', { name: `${receiver.url}/held` })
      .waitFor();
    // The 4xx figure opens the failed requests of the hour.
    const fourxx = page.getByRole('link', { name: /4xx in the last hour/ });
    assert.match(String(await fourxx.getAttribute('href')), /#\/requests\?status=4xx&since=/);
    await fits(page, 'overview with what needs attention', {
      heading: 'Overview',
      shot: 'overview-attention',
    });
    await item(/Stuck Cars/)
      .getByRole('link', { name: /Stuck Cars/ })
      .click();
    await drawn(page, /Stuck Cars/);
  });

  test('after an outage it says so, offers Retry, and comes back by itself with the time of its figures', async () => {
    const tab = await b.context.newPage();
    await tab.clock.install();
    await tab.goto(`${app.url}/console`);
    await tab.getByLabel(TOKEN_FIELD).waitFor();
    await signIn(tab, app.running.adminToken);
    await drawn(tab, 'Overview');
    assert.match(await tab.locator('[data-updated]').innerText(), /^Last updated \d\d:\d\d:\d\d/);
    // The service stops answering: the next refresh says so, with Retry and when it last had figures.
    await tab.route('**/api/admin/v1/**', (route) => route.abort('connectionrefused'));
    await tab.clock.fastForward(11_000);
    const alert = tab.getByRole('alert').filter({ hasText: 'The service did not answer' });
    await alert.waitFor();
    assert.match(await tab.locator('[data-updated]').innerText(), /^Last updated \d\d:\d\d:\d\d/);
    await tab.getByRole('button', { name: 'Retry' }).click();
    await alert.waitFor();
    // Back: the figures return by themselves at the next refresh, no click, no reload.
    await tab.unroute('**/api/admin/v1/**');
    await tab.clock.fastForward(11_000);
    await tab.getByRole('region', { name: 'Needs attention' }).waitFor();
    assert.equal(await alert.count(), 0);
    // And Retry brings them back at once.
    await tab.route('**/api/admin/v1/**', (route) => route.abort('connectionrefused'));
    await tab.clock.fastForward(11_000);
    await alert.waitFor();
    await tab.unroute('**/api/admin/v1/**');
    await tab.getByRole('button', { name: 'Retry' }).click();
    await tab.getByRole('region', { name: 'Needs attention' }).waitFor();
    assert.equal(await alert.count(), 0);
    await tab.close();
    assert.deepEqual(
      b.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to fetch/.test(e)),
      [],
      'no errors in the browser console',
    );
  });
});
