import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { createPartner, EXT, listingBody, type TestApp, unique } from './helpers/app.js';
import { type ConsoleSession, consoleSession, drawn, fits } from './helpers/console.js';
import { eventually } from './helpers/eventually.js';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.js';

/**
 * Webhook triage in the console (issue 46, point 5): what the receiver answered, a test ping and a
 * retry now on an endpoint that is failing but enabled (no disable the partner would see), and a
 * page that follows the next attempt after Resume, with no reload.
 */
let app: TestApp;
let receiver: Receiver;
let b: ConsoleSession;
let page: Page;

before(async () => {
  receiver = await startReceiver({ failRate: 1 });
  b = await consoleSession({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' },
  });
  ({ app, page } = b);
});
after(async () => {
  await b?.close();
  await receiver?.close();
});

describe('a failing webhook endpoint', () => {
  test('its receiver answer shown; test ping and retry now without a disable; Resume followed without a reload', async () => {
    const partner = await createPartner(app, {
      global: true,
      name: unique('Triage Cars'),
      scopes: ['read:listings', 'write:listings', 'manage:webhooks'],
    });
    const dealer = await app.admin('POST', '/dealers', { locationCode: unique('TRI') });
    const created = await app.call('POST', `${EXT}/webhooks`, {
      secret: partner.secret,
      body: { url: receiver.url, description: 'Stock sync' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    receiver.secrets.push(created.body.data.secret);
    const write = async () => {
      const written = await app.call('PUT', `${EXT}/listings/${unique('tri')}`, {
        secret: partner.secret,
        body: listingBody({ dealerLocationCode: dealer.locationCode }),
      });
      assert.ok(written.status < 300, written.text);
    };
    const endpoint = () => app.admin('GET', `/webhooks/${id}`);
    await write();
    // Failing, and its wait grown to an hour (as after a day of failures): the time is moved, not waited for.
    await eventually(
      async () => {
        await app.running.db.query(
          'TestPostponeRetry',
          "UPDATE webhook_endpoints SET next_attempt_at = now() + interval '1 hour' WHERE id = $1 AND failing_since IS NOT NULL",
          [id],
        );
        await sleep(300);
        const e = await endpoint();
        return (
          Boolean(e.failingSince) && Date.parse(e.pendingDelivery?.nextAttemptAt) > Date.now() + 30 * 60_000
        );
      },
      () => `receiver saw ${receiver.requests.length} requests`,
    );

    await page.goto(`${app.url}/console#/webhooks/${id}`);
    await drawn(page, receiver.url);
    await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    assert.match(await page.locator('[data-state]').innerText(), /^failing since /);
    // What the receiver answered, beside its status.
    const failedRow = page.getByRole('row').filter({ hasText: 'listings.changed' }).first();
    assert.match(await failedRow.innerText(), /500/);
    assert.match(await failedRow.innerText(), /try again later/);
    // Enabled and failing: a test and a retry, no disable needed.
    await page.getByRole('button', { name: 'Disable endpoint' }).waitFor();
    receiver.failRate = 0;
    await page.getByRole('button', { name: 'Send a test ping' }).click();
    const said = page.getByRole('status').filter({ hasText: 'Test ping' });
    await said.getByText(/Test ping: the receiver answered 200/).waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: 'ping' })
      .filter({ hasText: 'succeeded' })
      .first()
      .waitFor();
    assert.match(
      await page.locator('[data-state]').innerText(),
      /^failing since /,
      'a ping changes no delivery',
    );
    await page.getByRole('button', { name: 'Retry now' }).click();
    // The page follows the attempt: the delivery succeeds and the endpoint is healthy, no reload.
    await page.locator('[data-state]', { hasText: /^enabled$/ }).waitFor({ timeout: 15_000 });
    await page
      .getByRole('row')
      .filter({ hasText: 'listings.changed' })
      .filter({ hasText: 'succeeded' })
      .first()
      .waitFor();
    const e = await endpoint();
    assert.equal(e.enabled, true);
    assert.equal(e.failingSince, null);
    const actions = (await app.admin('GET', `/audit-log?partnerId=${partner.id}&limit=50`)).map(
      (entry: { action: string }) => entry.action,
    );
    assert.ok(actions.includes('webhook.retried'), actions.join(', '));
    assert.ok(!actions.includes('webhook.disabled'), 'no disable the partner sees');
    await fits(page, 'a webhook endpoint after triage', { heading: receiver.url, shot: 'webhook-triage' });

    // Failing again, disabled, fixed, resumed: the page shows the next attempt by itself.
    await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    receiver.failRate = 1;
    await write();
    await eventually(
      async () => Boolean((await endpoint()).failingSince),
      () => `receiver saw ${receiver.requests.length} requests`,
    );
    await page.getByLabel('Why (the partner sees it)').fill('Receiver down');
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await page.locator('[data-state]', { hasText: 'disabled by the operator: Receiver down' }).waitFor();
    receiver.failRate = 0;
    const succeeded = page
      .getByRole('row')
      .filter({ hasText: 'listings.changed' })
      .filter({ hasText: 'succeeded' });
    const before = await succeeded.count();
    await page.getByRole('button', { name: 'Resume deliveries' }).click();
    await page.locator('[data-state]', { hasText: /^enabled$/ }).waitFor();
    await eventually(
      async () => (await succeeded.count()) > before,
      () => `${before} succeeded deliveries shown`,
      15_000,
    );
    assert.equal(
      await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
      true,
    );
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
