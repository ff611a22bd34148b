import type { KeyUseRecord } from '../store/request-records.js';
import type { PartnerView, RotationView } from './shapes/partners.js';

type Use = RotationView['newSecret'];
const none = (): Use => ({ requests: 0, firstAt: null, lastAt: null });

/** Rows added up: their requests, the earliest first and the latest last. */
function total(rows: KeyUseRecord[]): Use {
  const out = none();
  for (const row of rows) {
    out.requests += row.requests;
    if (out.firstAt === null || row.firstAt < out.firstAt) out.firstAt = row.firstAt;
    if (out.lastAt === null || row.lastAt > out.lastAt) out.lastAt = row.lastAt;
  }
  return out;
}

/**
 * Whether a partner moved to the secret its last rotation issued, from the requests each secret
 * actually authenticated (store: partner_key_use), exact to the request: the rows of the
 * rotation are the requests made since it, `current` with the new secret, `previous` with the
 * one it replaced. One verdict, and the counts it rests on, so a page never says both.
 *
 * - not_moved: no request with the new secret yet (whatever came with the previous one);
 * - moving: both in use: a request with the previous secret came after the first with the new;
 * - moved: the new secret is used, and the previous one not since the first request with it.
 */
export function rotationOf(
  partner: Pick<PartnerView, 'secretRotatedAt' | 'previousSecretValidUntil'>,
  rows: KeyUseRecord[],
): RotationView {
  const at = partner.secretRotatedAt;
  const since = rows.filter((r) => r.rotatedAt === at);
  const newSecret = total(since.filter((r) => r.key === 'current'));
  const previousSecret = total(since.filter((r) => r.key === 'previous'));
  const retiredSecrets = total(since.filter((r) => r.key === 'retired'));
  const beforeRotation = total(rows.filter((r) => r.key !== 'retired' && r.rotatedAt !== at));
  const verdict =
    at === null
      ? 'never_rotated'
      : newSecret.requests === 0
        ? 'not_moved'
        : previousSecret.lastAt !== null &&
            newSecret.firstAt !== null &&
            previousSecret.lastAt >= newSecret.firstAt
          ? 'moving'
          : 'moved';
  return {
    rotatedAt: at,
    previousSecretValidUntil: partner.previousSecretValidUntil,
    verdict,
    newSecret,
    previousSecret,
    retiredSecrets,
    beforeRotation,
  };
}
