import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ForecourtError } from '../../packages/client/src/errors.js';
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
