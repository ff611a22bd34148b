import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { bootApp, createTree, EXT, type TestApp, type Tree, unique } from './helpers/app.js';
import {
  accessible,
  type ConsoleBrowser,
  drawn,
  filtered,
  fits,
  go,
  openBrowser,
  signIn,
  TOKEN_FIELD,
} from './helpers/console.js';
import { eventually } from './helpers/eventually.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * An operator's first day in the console, one test per task, in the order a day brings them: each
 * step through the page as an operator does it, each screen checked by axe (WCAG 2.2 AA) and for
 * width at 1366 × 768 and 390 × 844; the main screens photographed (test-results/console/; `npm run screenshots`: docs/images/).
 */
let app: TestApp;
let tree: Tree;
let receiver: Receiver;
let b: ConsoleBrowser;
let page: Page;
/** The partner of the day: created in the tree, then used, rotated, disabled, edited. */
const partner = { name: unique('Acme Motors'), id: '', secret: '', url: '' };

before(async () => {
  // Loopback webhook targets: the receiver runs here (the demo allows them the same way).
  app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' });
  tree = await createTree(app);
  receiver = await startReceiver();
  b = await openBrowser(app);
  page = b.page;
});
after(async () => {
  await b?.browser.close();
  await receiver?.close();
  await app?.close();
});

const label = (key: string) => `${tree.codes[key]} · Dealer ${key}`;

describe("an operator's first day in the console", () => {
  test('sign in: a wrong token is refused with the reason, ADMIN_TOKEN opens the overview', async () => {
    await page.goto(`${app.url}/console`);
    await page.getByLabel(TOKEN_FIELD).waitFor();
    await fits(page, 'sign-in', { heading: 'Sign in', shot: 'sign-in' });
    await page.getByLabel(TOKEN_FIELD).fill(`fco_${'0'.repeat(48)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('not an operator token').waitFor();
    await signIn(page, app.running.adminToken);
    await drawn(page, 'Overview');
    await page.getByText('Signed in as ADMIN_TOKEN').waitFor();
    await fits(page, 'overview', { heading: 'Overview' });
  });

  test('create a partner with its access picked in the dealer tree, shown by name', async () => {
    await go(page, app, '#/partners', 'Partners');
    await page.getByLabel('Name', { exact: true }).fill(partner.name);
    await page.getByRole('checkbox', { name: 'write:listings' }).check();
    await page.getByRole('checkbox', { name: label('A') }).check();
    // The tree narrows to what is searched, and keeps what was ticked.
    await page.getByRole('searchbox', { name: 'Search the dealer tree for roots' }).fill(tree.codes.B1!);
    assert.equal(await page.getByRole('checkbox', { name: label('A2') }).count(), 0, 'the search narrows');
    await page.getByRole('checkbox', { name: label('B1') }).check();
    await page.getByText(`Picked: ${label('A')}, ${label('B1')}`).waitFor();
    await page.getByRole('button', { name: 'Create partner' }).click();
    partner.secret = (await page.locator('.secret code').innerText()).trim();
    assert.match(partner.secret, /^fc_/);
    // Listed at once, its access by dealer name.
    const row = page.getByRole('row').filter({ hasText: partner.name });
    assert.match(await row.innerText(), new RegExp(`${label('A')}, ${label('B1')}`));
    await page.getByRole('link', { name: `Open ${partner.name}` }).click();
    await drawn(page, partner.name);
    partner.url = page.url();
    partner.id = partner.url.split('/').at(-1)!;
    const created = await app.admin('GET', `/partners/${partner.id}`);
    assert.deepEqual(created.access, { scope: 'restricted', rootProfileIds: [tree.ids.A, tree.ids.B1] });
    assert.deepEqual(created.scopes, ['read:listings', 'read:locations', 'write:listings']);
    await go(page, app, '#/partners', 'Partners');
    await fits(page, 'partners', { heading: 'Partners', shot: 'partners' });
  });

  test('find its failures by filter, page through them, and read one (which listing it was about)', async () => {
    const { secret } = partner;
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 200);
    const failedId = unique('console-failed');
    const reference = unique('golf');
    const refused = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret,
      headers: { 'x-request-id': failedId },
      body: { title: 'Golf', price: 1000, year: 1850, dealerLocationCode: tree.codes.A1 },
    });
    assert.equal(refused.status, 422);
    // More bad queries than a page holds (50).
    for (let i = 0; i < 51; i++)
      assert.equal((await app.call('GET', `${EXT}/listings?colour=red`, { secret })).status, 400);
    // Requests are recorded after their answers, in batches: the page shows what is recorded, so
    // wait for all 52 to be (as the operator would, a moment later).
    let recorded = 0;
    await eventually(
      async () => {
        const found = await app.admin('GET', `/requests?partnerId=${partner.id}&key=current&pageSize=100`);
        recorded = found.length;
        return recorded === 52;
      },
      () => `${recorded} of the 52 failed requests recorded`,
    );

    await go(page, app, '#/requests', 'Requests');
    const filters = page.getByRole('search', { name: 'Filter failed requests' });
    await filters.getByLabel('Partner').selectOption({ label: partner.name });
    await filters.getByLabel('Error code').fill('VALIDATION_FAILED');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await filtered(page, /code=VALIDATION_FAILED/);
    const rows = page.locator('main table tbody tr');
    assert.equal(await rows.count(), 1, 'only the refused write');
    assert.match(await rows.first().innerText(), /422/);
    await fits(page, 'requests, filtered', { heading: 'Requests', shot: 'requests' });

    // The bad queries: 50 on the first page, the 51st on the next, by the API's cursor.
    await go(page, app, `#/requests?partnerId=${partner.id}&code=INVALID_QUERY&key=current`, 'Requests');
    assert.equal(await rows.count(), 50);
    await page.getByRole('link', { name: 'Older →' }).click();
    await page.getByRole('heading', { level: 2, name: /^Failed requests \(older page\)/ }).waitFor();
    await drawn(page, 'Requests');
    assert.equal(await rows.count(), 1);
    // The API's further filters, as the console sends them: route, secret, time.
    const until = new Date(Date.now() + 60_000).toISOString();
    const byRoute = await app.call(
      'GET',
      `/api/admin/v1/requests?partnerId=${partner.id}&route=${encodeURIComponent('/listings/{listing}')}&key=current&until=${until}`,
      { headers: { authorization: `Bearer ${app.running.adminToken}` } },
    );
    assert.equal(byRoute.status, 200, byRoute.text);
    assert.deepEqual(
      byRoute.body.data.map((r: { requestId: string }) => r.requestId),
      [failedId],
    );
    const badKey = await app.call('GET', '/api/admin/v1/requests?key=stolen', {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(badKey.status, 400);
    assert.match(badKey.text, /current, previous, retired or none/);

    // A filter the API refuses is said beside the filters; the page stays.
    await go(page, app, '#/requests?status=abc', 'Requests');
    const refusal = filters.getByRole('alert');
    assert.match(await refusal.innerText(), /status: must be a status from 400 to 599/);

    // One request, in full: whose, which secret, which listing.
    await go(page, app, `#/requests?partnerId=${partner.id}&code=VALIDATION_FAILED`, 'Requests');
    await page.locator(`a[title="${failedId}"]`).click();
    const detail = page.locator(`[data-request="${failedId}"]`);
    await detail.waitFor();
    assert.match(await detail.innerText(), /422 VALIDATION_FAILED/);
    assert.match(await detail.innerText(), new RegExp(partner.name));
    assert.equal(await detail.locator('[data-listing]').innerText(), reference);
    assert.match(await detail.innerText(), /year/);
    await fits(page, 'a request', { heading: 'Requests', shot: 'request' });
  });

  test('read its usage over 24 hours and 7 days', async () => {
    await page.goto(partner.url);
    await drawn(page, partner.name);
    // 1 read, 1 refused write, 51 bad queries.
    assert.equal(await page.locator('[data-total="requests"]').innerText(), '53');
    assert.equal(await page.locator('[data-total="4xx"]').innerText(), '52');
    await page.getByRole('link', { name: 'INVALID_QUERY' }).waitFor();
    const bars = await page.$$eval('svg.chart rect.req', (rects) =>
      rects.reduce((sum, r) => sum + Number(r.getAttribute('height')), 0),
    );
    assert.ok(bars > 0, 'the chart shows the traffic');
    await page.getByRole('link', { name: 'show 7 days' }).click();
    await page.getByRole('heading', { level: 2, name: /last 7 days/ }).waitFor();
    await drawn(page, partner.name);
    assert.equal(await page.locator('[data-total="requests"]').innerText(), '53');
    await page.goto(partner.url);
    await drawn(page, partner.name);
    await fits(page, 'a partner', { heading: partner.name, shot: 'partner' });
  });

  test('rotate with a grace period and watch the partner move to the new secret', async () => {
    await page.goto(partner.url);
    await drawn(page, partner.name);
    const grace = page.getByLabel('Previous secret keeps working for');
    assert.equal(await grace.inputValue(), '86400', 'a day of grace unless the operator picks otherwise');
    await grace.selectOption('3600');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('The previous secret keeps working until').waitFor();
    const fresh = (await page.locator('.secret code').innerText()).trim();
    assert.notEqual(fresh, partner.secret);
    assert.deepEqual(b.dialogs, [], 'a rotation with grace asks nothing');
    // The page is drawn again at once: the grace, its verdict and the counts it rests on.
    const verdict = page.locator('[data-verdict]');
    const counts = page.locator('[data-key-counts]');
    await verdict.getByText(/^Not moved yet/).waitFor();
    assert.match(await counts.innerText(), /New secret: 0 requests since the rotation/);
    assert.match(await counts.innerText(), /Previous secret: 0 requests since the rotation/);
    // The old secret still works, and says so in the records (a failure sent with it: "previous").
    assert.equal(
      (await app.call('GET', `${EXT}/listings?colour=red`, { secret: partner.secret })).status,
      400,
    );
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('cell', { name: 'previous', exact: true }).first().waitFor();
    assert.match(await verdict.innerText(), /^Not moved yet/);
    assert.match(await counts.innerText(), /Previous secret: 1 request since the rotation/);
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: fresh })).status, 200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await verdict
      .getByText(/^Moved: no request with the previous secret since the first with the new one/)
      .waitFor();
    // The counts since the rotation, request by request: the API's and the page's.
    const rotation = await app.admin('GET', `/partners/${partner.id}/rotation`);
    assert.deepEqual([rotation.newSecret.requests, rotation.previousSecret.requests], [1, 1]);
    assert.match(await counts.innerText(), /New secret: 1 request since the rotation/);
    partner.secret = fresh;
    await fits(page, 'a partner after a rotation', { heading: partner.name, shot: 'partner-rotated' });
    // Who still sends the old secret: its failures, one click away.
    await page.getByRole('link', { name: 'Failed requests with the previous secret' }).click();
    await page.waitForURL(/key=previous/);
    await drawn(page, 'Requests');
    const rows = page.locator('main table tbody tr');
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /previous/);
  });

  test('disable with a reason, and enable again', async () => {
    await page.goto(partner.url);
    await drawn(page, partner.name);
    await page.getByLabel('Why (kept with the partner and in the audit log)').fill('Contract ended');
    await page.getByRole('button', { name: 'Disable partner' }).click();
    await page.locator('[data-disabled]', { hasText: 'Disabled: Contract ended.' }).waitFor();
    assert.match(b.dialogs.at(-1)!, /^Disable .*Every request with its secrets is refused/);
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: partner.secret })).status, 401);
    await fits(page, 'a disabled partner', { heading: new RegExp(partner.name) });
    await page.getByRole('button', { name: 'Enable partner' }).click();
    await page.getByRole('button', { name: 'Disable partner' }).waitFor();
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: partner.secret })).status, 200);
  });

  test('manage dealers: create one, and see which partners a move takes a dealer from before saving it', async () => {
    await go(page, app, '#/dealers', 'Dealers');
    const code = unique('C');
    await page.getByLabel('Location code', { exact: true }).fill(code);
    await page.getByLabel('Parent location code (empty: a group at the top)').fill(tree.codes.B!);
    await page.getByLabel('City', { exact: true }).fill('Brugge');
    await page.getByRole('button', { name: 'Create location' }).click();
    await page.getByRole('link', { name: code }).waitFor();
    await page
      .getByRole('searchbox', { name: 'Search dealer profiles by code, name or city' })
      .fill('brugge');
    assert.equal(await page.getByRole('link', { name: tree.codes.A1! }).count(), 0, 'search narrows');
    await page.getByRole('searchbox', { name: 'Search dealer profiles by code, name or city' }).fill('');
    await fits(page, 'dealers', { heading: 'Dealers', shot: 'dealers' });

    // A1 (and A1a under it) from A to B: the partner sees A, and only B1 of B: it loses them.
    await page.getByRole('link', { name: tree.codes.A1!, exact: true }).click();
    await drawn(page, tree.codes.A1!);
    const preview = async () => {
      await page.getByLabel('Parent location code (move it; empty: top level)').fill(tree.codes.B!);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('region', { name: 'Move impact' }).waitFor();
    };
    await preview();
    const impact = page.getByRole('region', { name: 'Move impact' });
    assert.match(await impact.innerText(), /This profile and the 1 under it move under/);
    assert.equal(await impact.locator('[data-loses]').innerText(), partner.name);
    await impact.getByText('No partner gains them.').waitFor();
    assert.equal((await app.admin('GET', `/dealers/${tree.ids.A1}`)).parent.id, tree.ids.A, 'not moved yet');
    await fits(page, 'a move before it is saved', {
      heading: tree.codes.A1!,
      shot: 'dealer-move',
      redraw: async () => {
        await page.reload();
        await drawn(page, tree.codes.A1!);
        await preview();
      },
    });
    await page.getByRole('button', { name: 'Move and save' }).click();
    await page.getByText('Saved.').waitFor();
    assert.equal((await app.admin('GET', `/dealers/${tree.ids.A1}`)).parent.id, tree.ids.B);
    // Refused before anything is saved: a move under its own branch.
    await page.getByLabel('Parent location code (move it; empty: top level)').fill(tree.codes.A1a!);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').getByText('its own ancestor').waitFor();
  });

  test('see a webhook endpoint and its deliveries, disable it, find it from the overview, resume it', async () => {
    const owner = await app.admin<{ id: string; name: string; secret: string }>('POST', '/partners', {
      name: unique('Hooked'),
      scopes: ['read:listings', 'manage:webhooks'],
      access: { scope: 'global' },
    });
    const created = await app.call('POST', `${EXT}/webhooks`, {
      secret: owner.secret,
      body: { url: receiver.url, description: 'Stock sync' },
    });
    assert.equal(created.status, 201, created.text);
    const endpoint = created.body.data;
    receiver.secrets.push(endpoint.secret);
    const ping = await app.call('POST', `${EXT}/webhooks/${endpoint.id}/test`, { secret: owner.secret });
    assert.equal(ping.status, 200, ping.text);

    await go(page, app, `#/partners/${owner.id}`, owner.name);
    await page.getByRole('link', { name: receiver.url }).click();
    await drawn(page, receiver.url);
    await page.getByRole('cell', { name: 'succeeded' }).waitFor();
    assert.match(await page.locator('[data-state]').innerText(), /^enabled$/);
    await page.getByLabel('Why (the partner sees it)').fill('Answers slowly');
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await page.locator('[data-state]', { hasText: 'disabled by the operator: Answers slowly' }).waitFor();
    await fits(page, 'a webhook endpoint', { heading: receiver.url, shot: 'webhook' });

    // The overview's "disabled" count leads to it.
    await go(page, app, '#/', 'Overview');
    const disabled = page.locator('[data-webhooks="disabled"] a');
    assert.equal(await disabled.innerText(), '1');
    // The overview of a day with traffic and a disabled endpoint: what docs/operations.md shows.
    await fits(page, 'overview after a day', { heading: 'Overview', shot: 'overview' });
    await disabled.click();
    await drawn(page, 'Webhooks');
    await page.getByRole('cell', { name: owner.name }).waitFor();
    await fits(page, 'webhooks, disabled', { heading: 'Webhooks', shot: 'webhooks' });
    await page.getByRole('link', { name: receiver.url }).click();
    await drawn(page, receiver.url);
    await page.getByRole('button', { name: 'Resume deliveries' }).click();
    await page.locator('[data-state]', { hasText: /^enabled$/ }).waitFor();
    assert.equal((await app.admin('GET', `/webhooks/${endpoint.id}`)).enabled, true);
  });

  test('create an operator, work as her (edit the partner), read it in the audit log, revoke her', async () => {
    const olivia = unique('Olivia');
    await go(page, app, '#/operators', 'Operators');
    await page.getByLabel('Name of the operator').fill(olivia);
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('.secret code').innerText()).trim();
    assert.match(token, /^fco_[0-9a-f]{48}$/);
    await page.getByRole('cell', { name: olivia, exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, token);
    await page.getByText(`Signed in as ${olivia}`).waitFor();

    // As Olivia: rename the partner, drop B1 from its roots, add A2... A covers it: add B instead.
    await page.goto(partner.url);
    await drawn(page, partner.name);
    const edit = page.getByRole('form', { name: `Edit ${partner.name}` });
    const renamed = `${partner.name} NV`;
    await edit.getByLabel('Name', { exact: true }).fill(renamed);
    await edit.getByRole('checkbox', { name: label('B1') }).uncheck();
    await edit.getByRole('checkbox', { name: label('B'), exact: true }).check();
    await edit.getByRole('button', { name: 'Save partner' }).click();
    await drawn(page, renamed);
    assert.equal(await page.locator('[data-access]').innerText(), `${label('A')}, ${label('B')}`);

    // The audit log, filtered by operator: what she changed, in words.
    await go(page, app, '#/audit', 'Audit log');
    await page.getByLabel('Who').selectOption('operator');
    await page.getByLabel('Operator (name, or ADMIN_TOKEN)').fill(olivia);
    await page.getByLabel('Action').selectOption('partner.updated');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await filtered(page, /operator=/);
    const rows = page.locator('main table tbody tr');
    assert.equal(await rows.count(), 1);
    const said = await rows.first().innerText();
    assert.match(said, new RegExp(`name: ${partner.name} → ${renamed}`));
    assert.match(
      said,
      new RegExp(`restricted to ${label('A')}, ${label('B1')} → restricted to ${label('A')}, ${label('B')}`),
    );
    assert.doesNotMatch(said, new RegExp(tree.ids.B1!), 'dealers by name, not id');
    await fits(page, 'audit log, filtered', { heading: 'Audit log', shot: 'audit' });
    const wrongActor = await app.call('GET', '/api/admin/v1/audit-log?actor=robot', {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(wrongActor.status, 400);
    assert.match(wrongActor.text, /must be operator, partner, service or anonymous/);

    // Back as ADMIN_TOKEN: revoke her; her token opens nothing any more.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, app.running.adminToken);
    await go(page, app, '#/operators', 'Operators');
    await page.getByRole('button', { name: `Revoke ${olivia}'s token` }).click();
    await page
      .getByRole('row')
      .filter({ hasText: olivia })
      .getByText(/^revoked /)
      .waitFor();
    const refused = await app.call('GET', '/api/admin/v1/overview', {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(refused.status, 401);
    await fits(page, 'operators', { heading: 'Operators', shot: 'operators' });
    await accessible(page, 'operators');
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
