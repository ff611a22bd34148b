/**
 * How hard the image checker may press one host (docs/images.md, "Host limits"): at most
 * `maxInFlight` fetches at once and `ratePerSecond` started a second (a token bucket holding
 * `burst` tokens), and nothing while the host asked us to wait (a 429 or 503 with Retry-After).
 * The functions are pure: they take the time and return the new state, so tests own the clock
 * and instances can keep the state wherever suits them.
 *
 * Why these defaults. The check rate of a whole marketplace is about 25 a second
 * (schedule.ts). Most dealers host their photos on their dealer system's CDN, so one host can
 * hold a large share: a host with 3 million of the 15 million images needs 3,000,000 / 604,800 s
 * ≈ 5 checks a second to keep its week, so 8 a second leaves it room to catch up after a pause.
 * A dealer's own small web server, which a CDN is not, sees at most 4 connections from us, as a
 * browser opening a gallery would. A host that needs more (a big CDN) gets its own policy.
 */
export interface HostPolicy {
  maxInFlight: number;
  ratePerSecond: number;
  burst: number;
}

export const HOST_POLICY: HostPolicy = { maxInFlight: 4, ratePerSecond: 8, burst: 8 };

export interface HostState {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
  inFlight: number;
  /** No fetch starts before this (ms); 0 when not paused. */
  pausedUntil: number;
}

export type Admission =
  | { admitted: true; state: HostState }
  /** `retryInMs`: when a token or the pause's end allows one; null when only a finish frees a slot. */
  | { admitted: false; state: HostState; retryInMs: number | null };

/** A host not seen before: a full bucket. */
export function freshHost(now: number, policy: HostPolicy = HOST_POLICY): HostState {
  return { tokens: policy.burst, at: now, inFlight: 0, pausedUntil: 0 };
}

/** The bucket filled for the time that passed since `state.at` (a clock going back adds nothing). */
export function refill(state: HostState, now: number, policy: HostPolicy = HOST_POLICY): HostState {
  const passed = Math.max(0, now - state.at);
  const tokens = Math.min(policy.burst, state.tokens + (passed * policy.ratePerSecond) / 1000);
  return { ...state, tokens, at: Math.max(now, state.at) };
}

/** Whether one more fetch may start on the host now; if so, its token is spent and its slot taken. */
export function admit(state: HostState, now: number, policy: HostPolicy = HOST_POLICY): Admission {
  const filled = refill(state, now, policy);
  if (now < filled.pausedUntil)
    return { admitted: false, state: filled, retryInMs: filled.pausedUntil - now };
  if (filled.inFlight >= policy.maxInFlight) return { admitted: false, state: filled, retryInMs: null };
  if (filled.tokens < 1) {
    const retryInMs = Math.ceil(((1 - filled.tokens) * 1000) / policy.ratePerSecond);
    return { admitted: false, state: filled, retryInMs };
  }
  return { admitted: true, state: { ...filled, tokens: filled.tokens - 1, inFlight: filled.inFlight + 1 } };
}

/** A fetch on the host ended (whatever its outcome): its slot is free. */
export function release(state: HostState): HostState {
  return { ...state, inFlight: Math.max(0, state.inFlight - 1) };
}

/** The host asked us to wait: nothing starts there before `until` (a longer pause is kept). */
export function pause(state: HostState, until: number): HostState {
  return { ...state, pausedUntil: Math.max(state.pausedUntil, until) };
}

/** Whether the state is no different from a fresh host's (and can be forgotten). */
export function isIdle(state: HostState, now: number, policy: HostPolicy = HOST_POLICY): boolean {
  const filled = refill(state, now, policy);
  return filled.inFlight === 0 && filled.tokens >= policy.burst && now >= filled.pausedUntil;
}

const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** The longest pause a Retry-After may ask for: a host cannot park its images for days. */
export const MAX_PAUSE_MS = 60 * 60 * 1000;

/**
 * A Retry-After header (seconds, or an HTTP date) as milliseconds from `now`, capped at an hour;
 * null when absent or unreadable.
 */
export function retryAfterMs(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(trimmed)) ms = Number(trimmed) * 1000;
  // The date form RFC 9110 has senders write (IMF-fixdate); Date.parse alone takes "1.5" for 2001.
  else if (IMF_FIXDATE.test(trimmed)) ms = Date.parse(trimmed) - now;
  else return null;
  if (Number.isNaN(ms)) return null;
  return Math.min(Math.max(0, ms), MAX_PAUSE_MS);
}

/**
 * Which host a URL counts against: its host name, lower-cased, with the port when not the
 * scheme's default. A URL that does not parse counts against itself (its fetch fails at once).
 */
export function hostKey(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url;
  }
}

/**
 * The limits of every host one checker instance talks to, over the pure functions above. Hosts
 * back to a fresh state are forgotten at `sweep`, so the map holds only the hosts in use.
 */
export class HostLimits {
  readonly #hosts = new Map<string, HostState>();
  readonly #policy: HostPolicy;
  readonly #overrides: ReadonlyMap<string, HostPolicy>;

  constructor(policy: HostPolicy = HOST_POLICY, overrides: Record<string, Partial<HostPolicy>> = {}) {
    this.#policy = policy;
    this.#overrides = new Map(
      Object.entries(overrides).map(([host, own]) => [host.toLowerCase(), { ...policy, ...own }]),
    );
  }

  policyFor(host: string): HostPolicy {
    return this.#overrides.get(host) ?? this.#policy;
  }

  /** Takes a slot on the URL's host if its limits allow one now. */
  tryStart(url: string, now: number): { admitted: true } | { admitted: false; retryInMs: number | null } {
    const host = hostKey(url);
    const policy = this.policyFor(host);
    const answer = admit(this.#hosts.get(host) ?? freshHost(now, policy), now, policy);
    this.#hosts.set(host, answer.state);
    return answer.admitted ? { admitted: true } : { admitted: false, retryInMs: answer.retryInMs };
  }

  /** Gives back the slot a started fetch took. */
  finish(url: string): void {
    const host = hostKey(url);
    const state = this.#hosts.get(host);
    if (state) this.#hosts.set(host, release(state));
  }

  /** The host of the URL asked us to wait `ms`. */
  pause(url: string, now: number, ms: number): void {
    const host = hostKey(url);
    const policy = this.policyFor(host);
    this.#hosts.set(host, pause(this.#hosts.get(host) ?? freshHost(now, policy), now + ms));
  }

  /** Forgets the hosts whose state is a fresh one's; returns how many are still held. */
  sweep(now: number): number {
    for (const [host, state] of this.#hosts) {
      if (isIdle(state, now, this.policyFor(host))) this.#hosts.delete(host);
    }
    return this.#hosts.size;
  }

  /** In-flight fetches on a host (metrics, tests). */
  inFlight(url: string): number {
    return this.#hosts.get(hostKey(url))?.inFlight ?? 0;
  }
}
