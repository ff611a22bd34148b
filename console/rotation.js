// @ts-check
// A rotation's grace in words: the one verdict (GET /partners/{id}/rotation), the counts it rests
// on, and what retiring the previous secret now would do. Counted request by request from the
// secret each request sent: nothing is said of a request made before the rotation as if it came
// after (docs/operations.md, "Rotating a secret").
import { plural, when } from './format.js';

/** @typedef {import('../src/domain/shapes/partners.js').RotationView} Rotation */

/**
 * The headline: whether the partner moved to its new secret, and why it is said.
 * @param {Rotation} r
 */
export function verdict(r) {
  switch (r.verdict) {
    case 'not_moved':
      return `Not moved yet: no request with the new secret since the rotation at ${when(r.rotatedAt)}. Retiring the previous secret now would refuse the partner's requests until it sends the new one.`;
    case 'moving':
      return `Moving: both secrets were used since the rotation. The previous one was last used at ${when(r.previousSecret.lastAt)}, after the first request with the new one (${when(r.newSecret.firstAt)}). Retiring it now would refuse the requests still sending it.`;
    case 'moved':
      return `Moved: no request with the previous secret since the first with the new one (${when(r.newSecret.firstAt)}). Retiring the previous secret now refuses no request seen so far.`;
    default:
      return 'The secret was never rotated.';
  }
}

/**
 * The counts under the verdict, one line per secret.
 * @param {Rotation} r
 */
export function counts(r) {
  /** @param {Rotation['newSecret']} u */
  const span = (u) =>
    u.requests === 0
      ? ''
      : u.requests === 1
        ? ` (at ${when(u.lastAt)})`
        : ` (the first at ${when(u.firstAt)}, the last at ${when(u.lastAt)})`;
  return [
    `New secret: ${plural(r.newSecret.requests, 'request')} since the rotation${span(r.newSecret)}.`,
    `Previous secret: ${plural(r.previousSecret.requests, 'request')} since the rotation${span(r.previousSecret)}.`,
    r.retiredSecrets.requests
      ? `Retired secrets: ${plural(r.retiredSecrets.requests, 'request')} since the rotation, refused${span(r.retiredSecrets)}.`
      : null,
    `Before the rotation: ${plural(r.beforeRotation.requests, 'request')} with the secret current then${r.beforeRotation.lastAt ? `, the last at ${when(r.beforeRotation.lastAt)}` : ''}.`,
  ].filter(/** @returns {s is string} */ (s) => s !== null);
}

/**
 * The question asked before retiring the previous secret, as strong as the verdict warrants.
 * @param {string} name
 * @param {Rotation} r
 */
export const retireQuestion = (name, r) =>
  `Retire ${name}'s previous secret now? ${
    r.verdict === 'moved'
      ? 'It has moved: no request with the previous secret since its first request with the new one.'
      : r.verdict === 'moving'
        ? 'It still used the previous secret after moving to the new one: those requests will be refused.'
        : 'It has NOT moved: every request it sends with the previous secret will be refused.'
  } The current secret keeps working; no new secret is issued.`;
