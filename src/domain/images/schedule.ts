import { createHash } from 'node:crypto';
import type { ImageState } from './classify.js';

/**
 * When an image is checked next (docs/images.md, "Schedule").
 *
 * Sizing. A marketplace of a million listings with about 15 images each holds 15 million images.
 * Checking each good one once a week is 15,000,000 / 604,800 s ≈ 24.8 checks a second, every
 * second, whatever else happens: the rate the checker must sustain. On top of it: new and changed
 * URLs (checked at once; a day in which a tenth of the images change adds 1.5 M, ≈ 17/s) and
 * broken images on back-off (each at most once a day after the first hours: 5 % broken, 750,000,
 * adds ≈ 9/s). So about 25/s sustained and 50/s on a busy day. At an average photo of 250 kB that
 * is ≈ 6 MB/s (50 Mbit/s) read, and, at half a second a fetch, about 13 fetches in flight (25/s ×
 * 0.5 s, Little's law); a slow host holds its fetches up to the timeout, hence per-host limits
 * (host-limits.ts) rather than one global pool.
 *
 * Spread. A weekly re-check that started from each image's last check would keep the shape of
 * the day it was imported: a million listings loaded on a Monday would all come due the next
 * Monday. Instead a hash of the URL gives each image its slot in the week, and a good image is
 * checked next at its slot, at least half a week after its last check. Hashes are uniform, so
 * the week's load is flat whatever the import pattern, and the slot of a URL is the same on every
 * instance, so they agree on when an image is due.
 */
export interface SchedulePolicy {
  /** How often a good image is checked again. */
  recheckMs: number;
  /** The first wait after a failed check; it doubles with each failure in a row. */
  firstBackoffMs: number;
  /** The longest wait between checks of a broken image. */
  maxBackoffMs: number;
  /** Each URL's back-off is stretched or shrunk by up to half this (0.2: ±10 %). */
  backoffJitter: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

export const SCHEDULE: SchedulePolicy = {
  recheckMs: 7 * DAY,
  firstBackoffMs: 5 * MINUTE,
  maxBackoffMs: DAY,
  backoffJitter: 0.2,
};

/** What the schedule needs to know of an image. */
export interface CheckHistory {
  url: string;
  state: ImageState;
  /** The last check's time; null when never checked. */
  checkedAt: Date | null;
  /** Checks in a row, up to the last one, that did not find the image ok (failuresAfter). */
  failures: number;
}

/**
 * The count of failed checks in a row after a check ended in `state`: back to 0 when ok;
 * unchanged when the check did not complete (pending).
 */
export function failuresAfter(previous: number, state: ImageState): number {
  if (state === 'ok') return 0;
  if (state === 'pending') return previous;
  return previous + 1;
}

/**
 * When the image is due. Pending (never checked, or its check abandoned): now. Ok: at its slot
 * of the week, between half a period and one and a half after the check. Any other state
 * (unreachable, not_an_image, too_small, too_large) is broken: 5 minutes after the first failure,
 * doubling with each one in a row (10, 20, 40 minutes...), at most a day, each URL's wait
 * stretched by its own factor within ±10 % so that the images of a host that was down do not
 * all come back in the same second.
 */
export function nextCheckAt(history: CheckHistory, now: Date, policy: SchedulePolicy = SCHEDULE): Date {
  if (history.state === 'pending' || history.checkedAt === null) return now;
  const last = history.checkedAt.getTime();
  if (history.state === 'ok') {
    const period = policy.recheckMs;
    const slot = Math.floor(fraction(history.url, 'slot') * period);
    const earliest = last + Math.floor(period / 2);
    const wait = (((slot - earliest) % period) + period) % period;
    return new Date(earliest + wait);
  }
  const failures = Math.max(1, history.failures);
  // 2^30 × 5 minutes is far past any cap: no overflow to Infinity from a long failing streak.
  const backoff = Math.min(policy.firstBackoffMs * 2 ** Math.min(failures - 1, 30), policy.maxBackoffMs);
  const stretch = 1 - policy.backoffJitter / 2 + policy.backoffJitter * fraction(history.url, 'backoff');
  return new Date(last + Math.round(backoff * stretch));
}

/** A number in [0, 1) fixed by the URL (and a salt, so that slot and stretch are independent). */
export function fraction(url: string, salt: string): number {
  const digest = createHash('sha256').update(salt).update('\0').update(url).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}
