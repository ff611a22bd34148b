import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ATTENTION, needsAttention } from '../../src/domain/attention.js';
import { rotationOf } from '../../src/domain/rotation.js';
import type { PartnerView } from '../../src/domain/shapes/partners.js';
import type { EndpointView } from '../../src/domain/shapes/webhooks.js';
import type { KeyUseRecord } from '../../src/store/request-records.js';

const R0 = '2026-11-26T08:40:00.000Z';
const R = '2026-11-26T08:43:05.000Z';
const at = (s: string) => `2026-11-26T08:${s}.000Z`;
const use = (
  rotatedAt: string | null,
  key: KeyUseRecord['key'],
  requests: number,
  firstAt: string,
  lastAt = firstAt,
) => ({
  rotatedAt,
  key,
  requests,
  firstAt: at(firstAt),
  lastAt: at(lastAt),
});
const grace = { secretRotatedAt: R, previousSecretValidUntil: '2026-11-26T09:43:05.000Z' };

test('the verdict rests on the secret each request sent, not on the minute it came in', () => {
  // The case: three requests with the old secret at 08:43:00, the rotation at 08:43:05.
  const before = [use(R0, 'current', 3, '43:00', '43:00')];
  const quiet = rotationOf(grace, before);
  assert.equal(quiet.verdict, 'not_moved');
  assert.deepEqual(
    [quiet.newSecret.requests, quiet.previousSecret.requests, quiet.beforeRotation.requests],
    [0, 0, 3],
  );
  // The previous secret after the rotation, the new one never: not moved.
  assert.equal(rotationOf(grace, [...before, use(R, 'previous', 2, '43:06', '43:20')]).verdict, 'not_moved');
  // The new secret, then the previous one again: both in use, never "moved".
  const both = rotationOf(grace, [...before, use(R, 'current', 1, '43:10'), use(R, 'previous', 1, '43:11')]);
  assert.equal(both.verdict, 'moving');
  // The previous secret only before the first request with the new one: moved.
  const moved = rotationOf(grace, [
    ...before,
    use(R, 'previous', 4, '43:06', '43:09'),
    use(R, 'current', 2, '43:10', '43:30'),
  ]);
  assert.equal(moved.verdict, 'moved');
  assert.deepEqual([moved.newSecret.firstAt, moved.previousSecret.lastAt], [at('43:10'), at('43:09')]);
  // Retired secrets counted apart; never a rotation: never_rotated.
  assert.equal(rotationOf(grace, [use(R, 'retired', 5, '44:00')]).retiredSecrets.requests, 5);
  assert.equal(
    rotationOf({ secretRotatedAt: null, previousSecretValidUntil: null }, []).verdict,
    'never_rotated',
  );
});

test('needs attention: what crosses each threshold, most pressing kind first, nothing else', () => {
  const now = Date.parse('2026-11-26T09:00:00Z');
  const partner = (id: string, over: Partial<PartnerView> = {}) =>
    ({ id, name: `P ${id}`, secretRotatedAt: null, previousSecretValidUntil: null, ...over }) as PartnerView;
  const soon = new Date(now + 3_600_000).toISOString();
  const later = new Date(now + (ATTENTION.graceEndingHours + 1) * 3_600_000).toISOString();
  const partners = [
    partner('erring'),
    partner('calm'),
    partner('stuck', { secretRotatedAt: R, previousSecretValidUntil: soon }),
    partner('moved', { secretRotatedAt: R, previousSecretValidUntil: soon }),
    partner('far', { secretRotatedAt: R, previousSecretValidUntil: later }),
    partner('retired'),
  ];
  const traffic = (partnerId: string, requests: number, errors: number, retired = 0) => ({
    partnerId,
    requests,
    errors,
    retiredKeyRequests: retired,
    lastRetiredMinute: retired ? '2026-11-26T08:59:00.000Z' : null,
  });
  const endpoint = (id: string, over: Partial<EndpointView>) =>
    ({
      id,
      url: `https://x.example/${id}`,
      partnerId: 'calm',
      enabled: true,
      failingSince: null,
      ...over,
    }) as EndpointView;
  const items = needsAttention({
    partners,
    lastHour: [traffic('erring', 18, 12), traffic('calm', 40, 9), traffic('ghost', 50, 50)],
    lastDay: [traffic('retired', 3, 3, 3)],
    keyUse: new Map([['moved', [use(R, 'current', 1, '44:00')]]]),
    endpoints: [
      endpoint('failing', { failingSince: '2026-11-26T08:00:00.000Z' }),
      endpoint('held', { enabled: false, disabledReason: 'disabled by the operator: slow' }),
      endpoint('off', { enabled: false, disabledReason: 'disabled by the partner' }),
      endpoint('fine', {}),
    ],
    now,
  });
  assert.deepEqual(
    items.map((i) => `${i.kind}:${i.partner?.id ?? ''}:${i.endpoint?.id ?? ''}`),
    [
      'error_rate:erring:',
      'grace_ending:stuck:',
      'retired_secret:retired:',
      'webhook_failing:calm:failing',
      'webhook_disabled:calm:held',
    ],
  );
  assert.deepEqual([items[0]?.requests, items[0]?.failed], [18, 12]);
  assert.equal(items[1]?.verdict, 'not_moved');
});
