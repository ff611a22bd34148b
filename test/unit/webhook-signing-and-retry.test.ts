import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { cursorCodec } from '../../src/domain/cursor.js';
import { ProblemError } from '../../src/domain/errors.js';
import { deliveryBody, endpointFingerprint } from '../../src/domain/webhooks/payload.js';
import { afterFailure, RETRY_PERIOD_MS, retryDelayMs } from '../../src/domain/webhooks/retry.js';
import { scopeKey } from '../../src/domain/webhooks/scope.js';
import {
  generateWebhookSecret,
  SECRET_PREFIX,
  sign,
  signingSecrets,
  webhookHeaders,
} from '../../src/domain/webhooks/signing.js';

// Webhook deliveries (docs/webhooks.md): Standard Webhooks signatures, the retry schedule and the
// 3-day rule, the body and its cursor. No receiver, no clock: `now` and `random` are given.

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const OTHER = `whsec_${Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')}`;
const half = () => 0.5;

test('a new secret is whsec_ and the base64 of 32 random bytes, different every time', () => {
  const a = generateWebhookSecret();
  const b = generateWebhookSecret();
  assert.ok(a.startsWith(SECRET_PREFIX));
  assert.equal(Buffer.from(a.slice(SECRET_PREFIX.length), 'base64').length, 32);
  assert.notEqual(a, b);
});

test('a signature is v1, and the base64 HMAC-SHA256 of id.timestamp.body under the decoded key', () => {
  const key = Buffer.from('0123456789abcdef0123456789abcdef');
  const expected = createHmac('sha256', key).update('msg_1.1763743228.{"a":1}').digest('base64');
  assert.equal(sign(SECRET, 'msg_1', 1763743228, '{"a":1}'), `v1,${expected}`);
});

test('the signature changes with the id, the timestamp, the body and the secret', () => {
  const base = sign(SECRET, 'msg_1', 100, 'body');
  assert.notEqual(sign(SECRET, 'msg_2', 100, 'body'), base);
  assert.notEqual(sign(SECRET, 'msg_1', 101, 'body'), base);
  assert.notEqual(sign(SECRET, 'msg_1', 100, 'body '), base);
  assert.notEqual(sign(OTHER, 'msg_1', 100, 'body'), base);
});

test('the headers of a delivery verify with the standardwebhooks library', () => {
  const secret = generateWebhookSecret();
  const body = '{"type":"ping","data":[],"cursor":"x"}';
  const headers = webhookHeaders([secret], 'msg_abc', body);
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  assert.throws(() => new Webhook(secret).verify(`${body} `, headers), /signature/i);
});

test('the timestamp header is whole seconds since the epoch of the given now', () => {
  const headers = webhookHeaders([SECRET], 'msg_1', '{}', new Date('2026-11-21T16:40:28.999Z'));
  assert.equal(headers['webhook-timestamp'], String(Date.parse('2026-11-21T16:40:28Z') / 1000));
  assert.equal(headers['webhook-id'], 'msg_1');
  assert.equal(
    headers['webhook-signature'],
    sign(SECRET, 'msg_1', Number(headers['webhook-timestamp']), '{}'),
  );
});

test('during a rotation both secrets sign, space-separated, and either verifies alone', () => {
  const now = new Date();
  const body = '{"type":"ping","data":[],"cursor":"c"}';
  const headers = webhookHeaders([SECRET, OTHER], 'msg_r', body, now);
  const parts = headers['webhook-signature']!.split(' ');
  assert.equal(parts.length, 2);
  assert.ok(parts.every((p) => p.startsWith('v1,')));
  assert.ok(new Webhook(SECRET).verify(body, headers));
  assert.ok(new Webhook(OTHER).verify(body, headers));
});

test('signing secrets: the previous one signs until its expiry, not at or after it', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  const endpoint = (expires: string | null, previous: string | null = OTHER) => ({
    secret: SECRET,
    previousSecret: previous,
    previousSecretExpiresAt: expires,
  });
  assert.deepEqual(signingSecrets(endpoint('2026-11-26T12:00:00.001Z'), now), [SECRET, OTHER]);
  assert.deepEqual(signingSecrets(endpoint('2026-11-26T12:00:00.000Z'), now), [SECRET]);
  assert.deepEqual(signingSecrets(endpoint('2026-11-25T12:00:00Z'), now), [SECRET]);
});

test('signing secrets: no previous secret, or one without an expiry, means the current one only', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  assert.deepEqual(
    signingSecrets(
      { secret: SECRET, previousSecret: null, previousSecretExpiresAt: '2099-01-01T00:00:00Z' },
      now,
    ),
    [SECRET],
  );
  assert.deepEqual(
    signingSecrets({ secret: SECRET, previousSecret: OTHER, previousSecretExpiresAt: null }, now),
    [SECRET],
  );
});

test('retry delays follow the table of docs/webhooks.md without jitter', () => {
  const table: [number, number][] = [
    [1, 2_000],
    [2, 4_000],
    [3, 8_000],
    [4, 16_000],
    [5, 32_000],
    [6, 64_000], // "1 min"
    [7, 128_000], // "2 min"
    [8, 256_000], // "4 min"
    [9, 512_000], // "8.5 min"
    [10, 1_024_000], // "17 min"
    [11, 2_048_000], // "34 min"
    [12, 3_600_000], // "1 hour"
  ];
  assert.deepEqual(
    table.map(([attempt]) => [attempt, retryDelayMs(attempt, half)]),
    table,
  );
});

test('the jitter is ±25 %: the first retry comes between 1.5 s and 2.5 s, so within 5 s', () => {
  assert.equal(
    retryDelayMs(1, () => 0),
    1_500,
  );
  assert.equal(
    retryDelayMs(1, () => 0.999999),
    2_500,
  );
  assert.equal(
    retryDelayMs(4, () => 0),
    12_000,
  );
  assert.equal(
    retryDelayMs(4, () => 0.25),
    14_000,
  );
});

test('never more than an hour between attempts, however many failed', () => {
  for (const attempt of [12, 13, 31, 32, 100, 10_000]) {
    assert.equal(
      retryDelayMs(attempt, () => 0.999),
      3_600_000,
      `attempt ${attempt}`,
    );
  }
  // Attempt 12 with the lowest jitter is still below the hour (2 s × 2^11 × 0.75).
  assert.equal(
    retryDelayMs(12, () => 0),
    3_072_000,
  );
});

test('afterFailure: a retry at now plus the delay while the streak is younger than 3 days', () => {
  const since = new Date('2026-11-20T00:00:00Z');
  const now = new Date('2026-11-21T00:00:00Z');
  assert.deepEqual(afterFailure(3, 500, since, now, half), { retryAt: new Date(now.getTime() + 8_000) });
  assert.deepEqual(afterFailure(1, null, now, now, half), { retryAt: new Date(now.getTime() + 2_000) });
});

test('afterFailure: 410 Gone disables at once, even on the first attempt', () => {
  const now = new Date('2026-11-21T00:00:00Z');
  assert.deepEqual(afterFailure(1, 410, now, now, half), { disable: 'the endpoint answered 410 Gone' });
  // Other statuses, 404 and 3xx included, are retried.
  for (const status of [301, 404, 429, 503]) {
    assert.ok('retryAt' in afterFailure(1, status, now, now, half), String(status));
  }
});

test('afterFailure: a retry that would fall past 3 days from the first failure disables instead', () => {
  const since = new Date('2026-11-20T00:00:00Z');
  // The next attempt (1 h later with half jitter at attempt 12+) lands exactly at 3 days: still tried.
  const atEdge = new Date(since.getTime() + RETRY_PERIOD_MS - 3_600_000);
  assert.deepEqual(afterFailure(40, 500, since, atEdge, half), {
    retryAt: new Date(since.getTime() + RETRY_PERIOD_MS),
  });
  const oneMsLater = new Date(atEdge.getTime() + 1);
  assert.deepEqual(afterFailure(41, 500, since, oneMsLater, half), {
    disable: 'deliveries failed for 3 days (since 2026-11-20T00:00:00.000Z, 41 attempts)',
  });
});

test('the retry period is three days', () => {
  assert.equal(RETRY_PERIOD_MS, 259_200_000);
});

const codec = cursorCodec('w'.repeat(32));
const position = { ts: '2026-11-21T16:40:27.090123Z', id: '3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c' };

test('a delivery body is {type, data, cursor} with each listing JSON as given, in order', () => {
  const data = ['{"id":"a","status":"active"}', '{"id":"b","status":"sold"}'];
  const body = deliveryBody(codec, 'ep-1', 'listings.changed', data, position);
  const parsed = JSON.parse(body) as { type: string; data: unknown[]; cursor: string };
  assert.deepEqual(Object.keys(parsed), ['type', 'data', 'cursor']);
  assert.equal(parsed.type, 'listings.changed');
  assert.deepEqual(parsed.data, [
    { id: 'a', status: 'active' },
    { id: 'b', status: 'sold' },
  ]);
  assert.ok(body.includes(`"data":[${data.join(',')}]`), 'the listing text is sent as serialized once');
});

test('a ping carries no listings and a cursor all the same', () => {
  const parsed = JSON.parse(deliveryBody(codec, 'ep-1', 'ping', [], position));
  assert.equal(parsed.type, 'ping');
  assert.deepEqual(parsed.data, []);
  assert.equal(typeof parsed.cursor, 'string');
});

test("a delivery's cursor is the endpoint's position, taken only for that endpoint", () => {
  const { cursor } = JSON.parse(deliveryBody(codec, 'ep-1', 'listings.changed', ['{}'], position));
  assert.deepEqual(codec.decode(cursor, endpointFingerprint('ep-1')), position);
  assert.throws(
    () => codec.decode(cursor, endpointFingerprint('ep-2')),
    (error: unknown) => error instanceof ProblemError && /was issued for other filters/.test(error.message),
  );
  assert.notEqual(endpointFingerprint('ep-1'), endpointFingerprint('ep-2'));
});

test('scopeKey: the same scope in any order is one key; another profile, status, type or mode is another', () => {
  const base = {
    mode: { test: false },
    profileIds: ['b', 'a'],
    statuses: null,
    types: ['listing.readiness_changed'],
  };
  assert.equal(
    scopeKey(base),
    scopeKey({ types: base.types, statuses: null, profileIds: ['a', 'b'], mode: { test: false } }),
  );
  for (const other of [
    { ...base, profileIds: ['a', 'b', 'c'] },
    { ...base, profileIds: null },
    { ...base, statuses: ['active'] },
    { ...base, types: ['listing.images_checked'] },
    { ...base, mode: { test: true } },
  ]) {
    assert.notEqual(scopeKey(other), scopeKey(base), JSON.stringify(other));
  }
});
