import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorFromResponse, ForecourtError } from '../../packages/client/src/errors.js';
import { maskSecret } from '../../packages/client/src/listen/run.js';
import { passes, serviceDelayMs, serviceState } from '../../packages/client/src/listen/service-state.js';

// forecourt listen (docs/webhooks.md): the signing secret as it is printed, and how it waits for a
// service that is away: which failures pass, the back-off, one line per change of state.

test('the signing secret is printed as the docs show it: whsec_ and three characters', () => {
  assert.equal(maskSecret('whsec_Xq3mT9cV2bN8kL4pR7sW1yZ5aD6fG0hJ'), 'whsec_Xq3…');
});

test('a service away (no answer, 5xx, 429) is waited for; a refused secret, scope or certificate is not', () => {
  assert.ok(passes(new ForecourtError(0, { code: 'NETWORK_ERROR', message: 'no answer' })));
  assert.ok(passes(new ForecourtError(503, { code: 'SERVICE_UNAVAILABLE', message: 'down' })));
  assert.ok(passes(new ForecourtError(502, { code: 'HTTP_502', message: 'bad gateway' })));
  assert.ok(passes(new ForecourtError(429, { code: 'RATE_LIMITED', message: 'slow down' })));
  assert.ok(!passes(new ForecourtError(401, { code: 'UNAUTHORIZED', message: 'not recognized' })));
  assert.ok(!passes(new ForecourtError(403, { code: 'INSUFFICIENT_SCOPE', message: 'read:listings' })));
  assert.ok(!passes(new ForecourtError(0, { code: 'TLS_CERTIFICATE_ERROR', message: 'untrusted' })));
  assert.ok(!passes(new Error('a bug')));
});

test('back-off: doubling from the first wait, capped, with jitter between half and all of the step', () => {
  const options = { firstMs: 1000, maxMs: 30_000 };
  const low = (attempt: number) => serviceDelayMs(attempt, { ...options, random: () => 0 });
  const high = (attempt: number) => serviceDelayMs(attempt, { ...options, random: () => 1 });
  assert.deepEqual([1, 2, 3, 4, 5, 6, 20].map(high), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  assert.deepEqual([1, 2, 6, 20].map(low), [500, 1000, 15000, 15000]);
});

test('one line when the service stops answering, one when it answers again; none per attempt', async () => {
  const lines: string[] = [];
  let now = 0;
  const state = serviceState((line) => lines.push(line), new AbortController().signal, {
    firstMs: 1,
    maxMs: 2,
    now: () => now,
  });
  const away = new ForecourtError(0, { code: 'NETWORK_ERROR', message: 'GET /listings: no answer' });
  state.answered();
  for (let i = 0; i < 5; i++) {
    await state.failed(away);
    now += 2500;
  }
  state.answered();
  state.answered();
  assert.deepEqual(lines, [
    'service not answering (NETWORK_ERROR: GET /listings: no answer); retrying with back-off up to 0.002 s until it answers (Ctrl-C stops)',
    'service answering again after 12.5 s (5 failed attempts); going on',
  ]);
  await assert.rejects(state.failed(new ForecourtError(401, { code: 'UNAUTHORIZED', message: 'no' })), /no/);
});

test("a wait the service asked for (Retry-After) is kept, not replaced by the back-off's", async () => {
  const answer = (status: number, headers: Record<string, string>) =>
    errorFromResponse(new Response(null, { status, headers }), {
      error: { code: status === 429 ? 'RATE_LIMITED' : 'SERVICE_UNAVAILABLE', message: 'wait' },
    });
  assert.equal(answer(429, { 'retry-after': '60' }).retryAfterMs, 60_000);
  assert.equal(answer(429, { 'ratelimit-reset': '7' }).retryAfterMs, 7000);
  assert.equal(answer(503, { 'retry-after': '5' }).retryAfterMs, 5000);
  assert.equal(answer(503, {}).retryAfterMs, undefined);
  // The listener sleeps what was asked (aborted here once the wait has started: it is 60 s).
  const controller = new AbortController();
  const started = Date.now();
  const state = serviceState(() => {}, controller.signal, { firstMs: 1, maxMs: 2, random: () => 0 });
  const waiting = state.failed(answer(429, { 'retry-after': '60' }));
  setTimeout(() => controller.abort(new Error('stopped')), 200);
  await assert.rejects(waiting, /stopped/);
  assert.ok(Date.now() - started >= 190, 'it waited, rather than 1 or 2 ms of its own back-off');
});
