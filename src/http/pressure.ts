import { type EventLoopUtilization, performance } from 'node:perf_hooks';

/**
 * Whether partners' requests need this instance's event loop more than background work does.
 * Every half second it looks at two things: how much of the time requests were in flight, and how
 * busy the event loop was. Requests present and the loop nearly full means background work (webhook
 * deliveries) is slowing them down: the instance counts as saturated until requests quieten or the
 * loop has room again (two thresholds, so it does not flap). Deliveries then go on at a trickle and
 * catch up as soon as the load drops; writes keep their speed however many endpoints there are.
 */
const WINDOW_MS = 500;
/** Requests in flight at least this share of the window: partners are using the instance. */
const REQUESTS_ACTIVE = 0.25;
/** Event-loop utilization that makes requests and background work compete, and that frees it. */
const BUSY_LOOP = 0.8;
const ROOMY_LOOP = 0.5;

export function requestPressure(now: () => number = () => performance.now()) {
  let inFlight = 0;
  let busySince = 0;
  let busyMs = 0;
  let windowStart = now();
  let loop: EventLoopUtilization = performance.eventLoopUtilization();
  let saturated = false;

  function roll(): void {
    const t = now();
    if (t - windowStart < WINDOW_MS) return;
    const busy = busyMs + (inFlight > 0 ? t - busySince : 0);
    const requestShare = Math.min(1, busy / (t - windowStart));
    const current = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(current, loop).utilization;
    loop = current;
    const active = requestShare >= REQUESTS_ACTIVE;
    if (!saturated && active && utilization > BUSY_LOOP) saturated = true;
    else if (saturated && (!active || utilization < ROOMY_LOOP)) saturated = false;
    busyMs = 0;
    windowStart = t;
    if (inFlight > 0) busySince = t;
  }

  return {
    started(): void {
      roll();
      if (inFlight++ === 0) busySince = now();
    },
    finished(): void {
      roll();
      if (inFlight > 0 && --inFlight === 0) busyMs += now() - busySince;
    },
    /** True while requests and background work compete for a full event loop. */
    saturated(): boolean {
      roll();
      return saturated;
    },
  };
}

export type RequestPressure = ReturnType<typeof requestPressure>;
