import autocannon from 'autocannon';

/** What one scenario measured: throughput and latency percentiles, in milliseconds. */
export interface Measured {
  requestsPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  requests: number;
  errors: number;
}

export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function summarize(latencies: number[], seconds: number, errors: number): Measured {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    requestsPerSecond: round(latencies.length / seconds),
    p50: round(percentile(sorted, 0.5)),
    p95: round(percentile(sorted, 0.95)),
    p99: round(percentile(sorted, 0.99)),
    requests: latencies.length,
    errors,
  };
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Unique values per request: `[<id>]` in the body is replaced (autocannon idReplacement). */
  idReplacement?: boolean;
  /** Rewrites each request's path, e.g. a fresh reference per PUT. */
  path?: () => string;
  /** Writes each request's body, e.g. a fresh primary key per insert. */
  requestBody?: () => string;
}

/**
 * A fixed number of connections for a fixed time, from this process (the service runs in its
 * own). Latencies are collected per response so p95 is exact; a non-2xx counts as an error.
 */
export async function load(options: LoadOptions): Promise<Measured> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  // A smoke run (a second per scenario) proves each scenario runs: a number of requests rather
  // than a time, which a machine busy with test passes may fill with none.
  const smoke = options.durationS <= 1;
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    ...(smoke ? { amount: Math.max(5, options.connections * 2) } : { duration: options.durationS }),
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
    idReplacement: options.idReplacement ?? false,
    ...(options.path || options.requestBody
      ? {
          requests: [
            {
              setupRequest: (req: { path: string; body?: string }) => {
                if (options.path) req.path = options.path();
                if (options.requestBody) req.body = options.requestBody();
                return req;
              },
            },
          ],
        }
      : {}),
  } as autocannon.Options) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else errors++;
  });
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  return summarize(
    latencies,
    Math.min(seconds, result.duration || seconds),
    errors + result.errors + result.timeouts,
  );
}

/** Requests and p50, p95, p99 (ms, one decimal) of each kind's latencies. */
export function latencySummary(latencies: Map<string, number[]>) {
  return Object.fromEntries(
    [...latencies].map(([kind, list]) => {
      const sorted = list.sort((a, b) => a - b);
      const p = (q: number) => (sorted.length ? Math.round(percentile(sorted, q) * 10) / 10 : null);
      return [kind, { requests: sorted.length, p50: p(0.5), p95: p(0.95), p99: p(0.99) }];
    }),
  );
}

/** Least-squares slope of y over t (seconds), per minute. */
export function slopePerMinute(points: { t: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.t - mt) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.t - mt) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60;
}
