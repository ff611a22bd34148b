/*
 * One loop of background work (docs/operations.md, "Background loops"): a pass, then a wait, then
 * the next pass, one at a time, until stopped. Every loop of an instance is one of these
 * (background/loops.ts lists them); what differs is only the pass and its settings.
 */

/** What a pass resolves to when it had more work than it took: the next pass runs at once. */
export const SATURATED = 'saturated';

export interface LoopSettings {
  /** Names the loop in metrics (`loop` label) and logs. */
  name: string;
  /** The wait between the end of a pass and the start of the next. */
  everyMs: number;
  /** The wait before the first pass (0, the default: at start). */
  firstAfterMs?: number;
  /**
   * After failures in a row, the next pass waits `firstMs` (default `everyMs`), doubling with
   * each failure up to `maxMs`, less up to a quarter (jitter: instances that failed together do
   * not come back together). The first success resets it.
   */
  backoff: { firstMs?: number; maxMs: number };
  /**
   * One pass; SATURATED when it left work undone. `stopping()` turns true once stop() is called:
   * a long pass may end early.
   */
  pass(stopping: () => boolean): Promise<unknown>;
  /** A pass failed; the next waits `retryInMs`. The loop's own log policy (most say it once). */
  failed?(error: unknown, detail: { inARow: number; retryInMs: number }): void;
  /** A pass succeeded after failures. */
  recovered?(): void;
  /** Runs once the last pass is over (a final write, rounds still under way, a connection). */
  afterLast?(): Promise<void>;
  /** For tests: the jitter's source (Math.random) and the clock of lastSuccessAt (Date.now). */
  random?: () => number;
  now?: () => number;
}

/** What a loop's maker lets a test set: a shorter interval, no jitter, its own clock. */
export type LoopTuning = Partial<Pick<LoopSettings, 'everyMs' | 'random' | 'now'>>;

/** What a loop has done, for metrics (http/metrics.ts) and tests. */
export interface LoopStats {
  name: string;
  /** Passes over, failed ones included. */
  passes: number;
  failures: number;
  /** Passes that had more work than they took. */
  saturated: number;
  /** Failures since the last success (0: not failing). */
  failingInARow: number;
  /** When the last pass that succeeded ended (ms since the epoch); null before the first. */
  lastSuccessAt: number | null;
  /** Time spent in passes, all together and the last one. */
  passMsTotal: number;
  lastPassMs: number | null;
}

export interface Loop {
  readonly name: string;
  /**
   * Starts the loop; resolves once its first pass is over (whether it succeeded or not), or at
   * once when the first pass is later (`firstAfterMs`). Never rejects.
   */
  start(): Promise<void>;
  /**
   * A pass now: whoever wakes the loop knows there is work (a notification, a round that ended),
   * so a wait or a back-off is cut short; during a pass, the next starts as it ends. Resolves once
   * that pass is over (at once when the loop is not running). Never rejects.
   */
  wake(): Promise<void>;
  /** Lets the pass under way finish (it sees `stopping()`), starts no other, then `afterLast`. */
  stop(): Promise<void>;
  stats(): LoopStats;
}

/** The back-off wait after `inARow` failures: doubling from `firstMs` up to `maxMs`, less jitter. */
export function backoffMs(inARow: number, firstMs: number, maxMs: number, random: () => number): number {
  const full = Math.min(maxMs, firstMs * 2 ** Math.min(inARow - 1, 30));
  return Math.round(full * (1 - JITTER * random()));
}

/** At most this share of a back-off wait is taken off at random. */
const JITTER = 0.25;

export function loop(settings: LoopSettings): Loop {
  const { name, everyMs } = settings;
  const firstBackoffMs = settings.backoff.firstMs ?? everyMs;
  const random = settings.random ?? Math.random;
  const now = settings.now ?? Date.now;
  const stats: LoopStats = {
    name,
    passes: 0,
    failures: 0,
    saturated: 0,
    failingInARow: 0,
    lastSuccessAt: null,
    passMsTotal: 0,
    lastPassMs: null,
  };
  let state: 'new' | 'started' | 'stopped' = 'new';
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let wokenDuringPass = false;
  /** Who woke the loop, told when the next pass to start is over. */
  let woken: (() => void)[] = [];
  let first: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  /** One pass, then the wait it leaves before the next. Never rejects. */
  async function once(): Promise<number> {
    const began = performance.now();
    let outcome: unknown;
    let failure: { error: unknown } | undefined;
    try {
      outcome = await settings.pass(() => state === 'stopped');
    } catch (error) {
      failure = { error };
    }
    const ms = performance.now() - began;
    stats.passes++;
    stats.passMsTotal += ms;
    stats.lastPassMs = ms;
    if (failure) {
      stats.failures++;
      stats.failingInARow++;
      const retryInMs = backoffMs(stats.failingInARow, firstBackoffMs, settings.backoff.maxMs, random);
      settings.failed?.(failure.error, { inARow: stats.failingInARow, retryInMs });
      return retryInMs;
    }
    stats.lastSuccessAt = now();
    if (outcome === SATURATED) stats.saturated++;
    if (stats.failingInARow > 0) {
      stats.failingInARow = 0;
      settings.recovered?.();
    }
    return outcome === SATURATED ? 0 : everyMs;
  }

  function run(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (running) return running;
    const waiting = woken;
    woken = [];
    running = once()
      // A hook that throws must not end the loop: the pass is over either way.
      .catch(() => everyMs)
      .then((next) => {
        running = undefined;
        const again = wokenDuringPass;
        wokenDuringPass = false;
        schedule(again ? 0 : next);
        for (const tell of waiting) tell();
      });
    return running;
  }

  function schedule(ms: number): void {
    if (state !== 'started') return;
    clearTimeout(timer);
    timer = setTimeout(run, ms);
    // Background work never keeps the process alive by itself; shutdown stops it in order.
    timer.unref();
  }

  return {
    name,
    start() {
      if (state !== 'new') return first ?? Promise.resolve();
      state = 'started';
      const firstAfterMs = settings.firstAfterMs ?? 0;
      if (firstAfterMs > 0) {
        schedule(firstAfterMs);
        first = Promise.resolve();
      } else {
        first = run();
      }
      return first;
    },
    wake() {
      if (state !== 'started') return Promise.resolve();
      const over = new Promise<void>((resolve) => woken.push(resolve));
      if (running) wokenDuringPass = true;
      else void run();
      return over;
    },
    stop() {
      stopping ??= (async () => {
        state = 'stopped';
        clearTimeout(timer);
        timer = undefined;
        await running;
        // No pass will come for those who woke it during the last one.
        for (const tell of woken.splice(0)) tell();
        await settings.afterLast?.();
      })();
      return stopping;
    },
    stats: () => ({ ...stats }),
  };
}
