/**
 * How busy this instance is with partners' requests: the share of the last half second during
 * which at least one request was being handled. Background work (webhook deliveries) reads it to
 * make way when the instance is saturated, so that adding endpoints does not slow partners' writes
 * down; deliveries then go on at a trickle and catch up as soon as the load drops.
 */
const WINDOW_MS = 500;
/** Above this share the instance counts as saturated. */
const SATURATED = 0.9;

export function requestPressure(now: () => number = () => performance.now()) {
  let inFlight = 0;
  let busySince = 0;
  let busyMs = 0;
  let windowStart = now();
  let share = 0;

  function roll(): void {
    const t = now();
    if (t - windowStart < WINDOW_MS) return;
    const busy = busyMs + (inFlight > 0 ? t - busySince : 0);
    // A window with nothing at all in it (no events for a long time) is idle, whatever came before.
    share = Math.min(1, busy / (t - windowStart));
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
    /** True while requests kept the instance busy for nearly all of the last window. */
    saturated(): boolean {
      roll();
      return share > SATURATED;
    },
  };
}

export type RequestPressure = ReturnType<typeof requestPressure>;
