import { type EventLoopUtilization, performance } from 'node:perf_hooks';

/**
 * Whether partners' requests need this instance more than background work does. Every half second
 * it looks at how much of the time requests were in flight and how busy the event loop was. The
 * pressure is the larger of the two (the loop counts only while requests are there to suffer from
 * it): requests in flight nearly all the time (the database or the CPU is the limit, the loop may
 * look idle), or requests present and the loop nearly full. Above ENTER the instance counts as
 * saturated until the pressure is under LEAVE (two thresholds, so it does not flap). Webhook
 * deliveries then go on at a trickle and catch up as soon as the load drops, so writes keep their
 * speed however many endpoints there are.
 */
const WINDOW_MS = 500;
/** Below this share of the window with requests in flight, the loop's business is not theirs. */
const REQUESTS_PRESENT = 0.25;
const ENTER = 0.85;
const LEAVE = 0.5;

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
    const pressure = Math.max(requestShare, requestShare >= REQUESTS_PRESENT ? utilization : 0);
    if (!saturated && pressure > ENTER) saturated = true;
    else if (saturated && pressure < LEAVE) saturated = false;
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
    /** True while partners' requests keep the instance saturated (see above). */
    saturated(): boolean {
      roll();
      return saturated;
    },
  };
}

export type RequestPressure = ReturnType<typeof requestPressure>;
