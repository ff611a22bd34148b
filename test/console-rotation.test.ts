import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { createPartner, EXT, type TestApp, unique } from './helpers/app.js';
import { type ConsoleSession, consoleSession, drawn, fits } from './helpers/console.js';

/**
 * A secret's rotation in the console (issue 46, points 1 and 2): the verdict "moved" comes from the
 * secret each request sent, exact to the request, and a grace ends without a third secret. The
 * requests go with both secrets around the rotation, in the rotation's own minute: the minute the
 * per-minute counts could not split.
 */
let app: TestApp;
let b: ConsoleSession;
let page: Page;

before(async () => {
  b = await consoleSession();
  ({ app, page } = b);
});
after(() => b?.close());

/** Leaves at least `ms` of the current minute, waiting for the next one when less is left. */
async function roomInThisMinute(ms: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < ms) await sleep(left + 250);
}

/** `n` reads with `secret`, each answered 200 (a successful request is counted, not kept). */
async function reads(secret: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret })).status, 200);
}

async function rotate(id: string, graceSeconds: number): Promise<{ secret: string; rotatedAt: string }> {
  const { secret } = await app.admin('POST', `/partners/${id}/rotate-secret`, { graceSeconds });
  return { secret, rotatedAt: (await app.admin('GET', `/partners/${id}`)).secretRotatedAt };
}

const minuteOf = (t: number | string) => Math.floor(new Date(t).getTime() / 60_000);

async function openPartner(id: string, name: string): Promise<void> {
  await page.goto(`${app.url}/console#/partners/${id}`);
  await drawn(page, name);
}

describe('a rotation in the console', () => {
  test('one verdict, from the secret each request sent: never "moved" from a request made before the rotation', async () => {
    await roomInThisMinute(12_000);
    // A: three requests with the old secret, the rotation seconds later, the new secret never used.
    const quiet = await createPartner(app, { global: true, name: unique('Quiet Motors') });
    const startedAt = Date.now();
    await reads(quiet.secret, 3);
    const a = await rotate(quiet.id, 3600);
    // B: the old secret, the rotation, the new one, the old one again, the new one: all in one minute.
    const mixed = await createPartner(app, { global: true, name: unique('Mixed Motors') });
    await reads(mixed.secret, 2);
    const bRotated = await rotate(mixed.id, 3600);
    await reads(bRotated.secret, 1);
    await reads(mixed.secret, 1);
    await reads(bRotated.secret, 1);
    assert.equal(minuteOf(a.rotatedAt), minuteOf(startedAt), 'A: requests and rotation in one minute');
    assert.equal(minuteOf(bRotated.rotatedAt), minuteOf(Date.now()), 'B: all in the rotation minute');

    // The page says it once: its verdict and the counts under it agree.
    const name = (await app.admin('GET', `/partners/${quiet.id}`)).name;
    await openPartner(quiet.id, name);
    const verdict = page.locator('[data-verdict]');
    const counts = page.locator('[data-key-counts]');
    assert.match(
      await verdict.innerText(),
      /^Not moved yet: no request with the new secret since the rotation/,
    );
    const aCounts = await counts.innerText();
    assert.match(aCounts, /New secret: 0 requests since the rotation/);
    assert.match(aCounts, /Previous secret: 0 requests since the rotation/);
    assert.match(aCounts, /Before the rotation: 3 requests/);
    assert.doesNotMatch(aCounts, /[1-9]\d* requests? with the new secret/);

    const mixedName = (await app.admin('GET', `/partners/${mixed.id}`)).name;
    await openPartner(mixed.id, mixedName);
    const bVerdict = await verdict.innerText();
    assert.match(bVerdict, /^Moving: both secrets were used since the rotation/);
    assert.doesNotMatch(bVerdict, /has moved|not moved/i);
    const bCounts = await counts.innerText();
    assert.match(bCounts, /New secret: 2 requests since the rotation/);
    assert.match(bCounts, /Previous secret: 1 request since the rotation/);
    assert.match(bCounts, /Before the rotation: 2 requests/);
    // The API: the requests of each secret, one by one, and the verdict the page said.
    const ra = await app.admin('GET', `/partners/${quiet.id}/rotation`);
    assert.equal(ra.verdict, 'not_moved');
    assert.deepEqual(
      [ra.newSecret.requests, ra.previousSecret.requests, ra.beforeRotation.requests],
      [0, 0, 3],
    );
    const rb = await app.admin('GET', `/partners/${mixed.id}/rotation`);
    assert.equal(rb.verdict, 'moving');
    assert.deepEqual(
      [rb.newSecret.requests, rb.previousSecret.requests, rb.beforeRotation.requests],
      [2, 1, 2],
    );
    assert.ok(rb.previousSecret.lastAt > rb.newSecret.firstAt, 'the previous secret after the first new');

    await fits(page, 'a partner moving to its new secret', { heading: mixedName });
  });

  test('"Retire the previous secret now" ends the grace and keeps the secret the partner moved to', async () => {
    await roomInThisMinute(10_000);
    const moved = await createPartner(app, { global: true, name: unique('Moved Motors') });
    await reads(moved.secret, 2);
    const r = await rotate(moved.id, 86_400);
    await reads(r.secret, 3);
    assert.equal(minuteOf(r.rotatedAt), minuteOf(Date.now()), 'the requests in the rotation minute');
    const name = (await app.admin('GET', `/partners/${moved.id}`)).name;
    await openPartner(moved.id, name);
    assert.match(
      await page.locator('[data-verdict]').innerText(),
      /^Moved: no request with the previous secret since the first with the new one/,
    );
    await page.getByRole('button', { name: 'Retire the previous secret now' }).click();
    await page.getByRole('status').getByText('The previous secret is retired').waitFor();
    assert.match(b.dialogs.at(-1)!, /^Retire .* previous secret now\? .*The current secret keeps working/s);
    // No third secret: the partner's current one still works, the previous one is refused.
    assert.equal(await page.locator('.secret').count(), 0, 'no new secret issued');
    assert.equal(await page.locator('[data-rotation]').count(), 0, 'the grace is over on the page');
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: r.secret })).status, 200);
    assert.equal((await app.call('GET', `${EXT}/listings`, { secret: moved.secret })).status, 401);
    const after = await app.admin('GET', `/partners/${moved.id}`);
    assert.equal(after.previousSecretValidUntil, null);
    const [entry] = await app.admin('GET', `/audit-log?action=partner.previous_secret_retired&limit=1`);
    assert.equal(entry.partnerId, moved.id);
    // Nothing left to retire: refused in words, nothing changed.
    const again = await app.call('POST', `/api/admin/v1/partners/${moved.id}/retire-previous-secret`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
    });
    assert.equal(again.status, 409);
    assert.match(again.body.error.message, /no previous secret in a grace period/);
    assert.deepEqual(b.errors, [], 'no errors in the browser console');
  });
});
