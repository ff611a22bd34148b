import type { Measured } from './load.js';

export interface Scenario {
  name: string;
  connections: number;
  service: Measured;
  dbLimit?: Measured;
  httpLimit?: Measured;
  ratioToDbLimit?: number;
  ratioToHttpLimit?: number;
  listingsPerSecond?: number;
  rawListingsPerSecond?: number;
  ratioToRawUpsert?: number;
  statements?: string[];
  /** The service process's CPU time (user + system) per request during the service run. */
  serviceCpuMs?: number;
  /** The service's resident memory at the end of the service run. */
  rssMb?: number;
  /** The page's encoding and bytes on the wire (with --accept-encoding, as asked for). */
  wireBytes?: { encoding: string; bytes: number };
  /** put-single with --peer: the peer's single insert (bench/lib/peer.ts, peerInsert). */
  peerInsert?: Measured;
  /** put-single's requests/s ÷ the peer's inserts/s. */
  ratioToPeerInsert?: number;
  /** The peer (Platformatic DB) serving the same page in the same run, with and without a total. */
  peer?: { withTotals: Measured; withoutTotals: Measured };
  /** requests/s ÷ the peer's without totals. */
  ratioToPeer?: number;
  /** The same page's bytes from each, and per key of an item, summed over the page's items. */
  pageBytes?: {
    ours: number;
    peer: number;
    oursByKey: Record<string, number>;
    peerByKey: Record<string, number>;
  };
}

export interface Run {
  label: string;
  database: 'postgres' | 'pglite';
  listings: number;
  connections: number;
  durationS: number;
  /** The service's resident memory a few seconds after start, before any request. */
  idleRssMb?: number;
  scenarios: Scenario[];
}

export interface Target {
  target: string;
  measured: string;
  met: boolean;
}

const r2 = (v: number) => Math.round(v * 100) / 100;

/** The targets of issue 7, each with what was measured. */
export function targets(runs: Run[]): Target[] {
  const find = (label: string, name: string) =>
    runs.find((r) => r.label === label)?.scenarios.find((s) => s.name === name);
  const out: Target[] = [];
  for (const name of ['list-restricted', 'list-global']) {
    const s = find('postgres-1m', name);
    if (!s) continue;
    out.push({
      target: `${name} (1M): ≥ 0.5 of the DB limit`,
      measured: `${s.ratioToDbLimit}`,
      met: (s.ratioToDbLimit ?? 0) >= 0.5,
    });
    out.push({
      target: `${name} (1M): p99 < 25 ms`,
      measured: `${s.service.p99} ms`,
      met: s.service.p99 < 25,
    });
  }
  const page1 = find('postgres-1m', 'list-global');
  const cursor = find('postgres-1m', 'list-global-cursor-400');
  const deep = find('postgres-1m', 'list-global-page-400');
  if (page1 && cursor) {
    const ratio = r2(cursor.service.p50 / page1.service.p50);
    out.push({ target: 'cursor page 400 ≤ 1.2 × page 1 (p50)', measured: `${ratio}`, met: ratio <= 1.2 });
  }
  if (page1 && deep) {
    const ratio = r2(deep.service.p50 / page1.service.p50);
    out.push({ target: 'page=400 ≤ 2 × page 1 (p50)', measured: `${ratio}`, met: ratio <= 2 });
  }
  for (const name of ['list-restricted', 'list-global']) {
    const big = find('postgres-1m', name);
    const small = find('postgres-10k', name);
    if (!big || !small) continue;
    const ratio = r2(big.service.p50 / small.service.p50);
    out.push({ target: `${name}: p50 at 1M ≤ 1.5 × at 10k`, measured: `${ratio}`, met: ratio <= 1.5 });
  }
  const bulk = find('postgres-1m', 'bulk-upsert-100');
  const put = find('postgres-1m', 'put-single');
  if (bulk?.ratioToRawUpsert !== undefined) {
    out.push({
      target: 'bulk upsert ≥ 0.5 of the raw multi-row upsert',
      measured: `${bulk.ratioToRawUpsert}`,
      met: bulk.ratioToRawUpsert >= 0.5,
    });
  }
  if (bulk && put) {
    const ratio = r2(bulk.listingsPerSecond! / put.listingsPerSecond!);
    out.push({ target: 'bulk ≥ 10 × single PUT (listings/s)', measured: `${ratio}`, met: ratio >= 10 });
  }
  const locations = find('postgres-1m', 'locations-500-with-counts');
  if (locations) {
    out.push({
      target: 'locations with counts, 500 locations: p95 < 50 ms',
      measured: `${locations.service.p95} ms`,
      met: locations.service.p95 < 50,
    });
  }
  const sync = find('postgres-1m', 'sync-global-200');
  const plain = find('postgres-1m', 'all-global-200');
  if (sync && plain) {
    const ratio = r2(sync.service.p50 / plain.service.p50);
    out.push({
      target: 'sync page (updatedSince long ago) ≤ 1.5 × the same page without it (p50, 1M)',
      measured: `${ratio}`,
      met: ratio <= 1.5,
    });
  }
  const visible = find('postgres-1m', 'write-visible');
  if (visible) {
    out.push({
      target: 'write acknowledged → passed by a cursor, quiet service: p99 < 1 s',
      measured: `${visible.service.p99} ms`,
      met: visible.service.p99 < 1000,
    });
  }
  const held = find('postgres-1m', 'write-visible-held-3s');
  if (held) {
    out.push({
      target: 'under a write held open 3 s: cursors wait for it (p99 ≤ 4 s) and skip nothing',
      measured: `p99 ${held.service.p99} ms, skipped ${(held.service as { skipped?: number }).skipped ?? '?'}`,
      met: held.service.p99 <= 4000 && (held.service as { skipped?: number }).skipped === 0,
    });
  }
  const lite = runs.find((r) => r.label === 'pglite-100k');
  for (const s of lite?.scenarios ?? []) {
    const base = find('postgres-100k', s.name);
    if (!base) continue;
    const ratio = r2(s.service.requestsPerSecond / base.service.requestsPerSecond);
    out.push({
      target: `PGlite ${s.name}: ≥ 0.5 of PostgreSQL (100k; issue 7 asked 0.3)`,
      measured: `${ratio}`,
      met: ratio >= 0.5,
    });
  }
  return [...out, ...cpuTargets(find, runs)];
}

/** Issue 21's targets: the service's own CPU below the database's. */
function cpuTargets(find: (label: string, name: string) => Scenario | undefined, runs: Run[]): Target[] {
  const out: Target[] = [];
  for (const name of ['list-restricted', 'list-global']) {
    const s = find('postgres-1m', name);
    if (s?.ratioToDbLimit !== undefined) {
      out.push({
        target: `${name} (1M): ≥ 0.85 of the DB limit`,
        measured: `${s.ratioToDbLimit}`,
        met: s.ratioToDbLimit >= 0.85,
      });
    }
    if (s?.serviceCpuMs !== undefined) {
      out.push({
        target: `${name} (1M): service CPU per page < 2 ms`,
        measured: `${s.serviceCpuMs} ms`,
        met: s.serviceCpuMs < 2,
      });
    }
  }
  const restricted = find('postgres-1m', 'list-restricted');
  if (restricted) {
    out.push({
      target: 'list-restricted (1M): p99 < 20 ms',
      measured: `${restricted.service.p99} ms`,
      met: restricted.service.p99 < 20,
    });
  }
  const bulk = find('postgres-1m', 'bulk-upsert-100');
  if (bulk?.ratioToRawUpsert !== undefined) {
    out.push({
      target: 'bulk-upsert-100 (1M): ≥ 0.6 of the raw upsert',
      measured: `${bulk.ratioToRawUpsert}`,
      met: bulk.ratioToRawUpsert >= 0.6,
    });
  }
  if (bulk?.listingsPerSecond !== undefined) {
    out.push({
      target: 'bulk-upsert-100 (1M): ≥ 7,000 listings/s',
      measured: `${bulk.listingsPerSecond}`,
      met: bulk.listingsPerSecond >= 7000,
    });
  }
  const locations = find('postgres-1m', 'locations-500-with-counts');
  if (locations) {
    out.push({
      target: 'locations-500-with-counts (1M): p95 < 25 ms',
      measured: `${locations.service.p95} ms`,
      met: locations.service.p95 < 25,
    });
  }
  const peered = runs.flatMap((r) =>
    r.scenarios.filter((s) => s.ratioToPeer !== undefined).map((s) => [r, s] as const),
  );
  const inserts = runs.flatMap((r) =>
    r.scenarios.filter((s) => s.ratioToPeerInsert !== undefined).map((s) => [r, s] as const),
  );
  for (const [run, s] of inserts) {
    out.push({
      target: `${s.name} (${run.label}) ÷ Platformatic DB's single insert (reported; no target)`,
      measured: `${s.ratioToPeerInsert} (${s.service.requestsPerSecond} ÷ ${s.peerInsert!.requestsPerSecond} req/s)`,
      met: true,
    });
  }
  // Compression (issue 45): the same page with and without gzip, in alternated rounds of the
  // same mode (bench/all.ts): the requests of all rounds over their time, each way.
  const rounds = (mode: string) =>
    runs
      .filter((r) => r.label.startsWith(`postgres-100k-${mode}-`))
      .flatMap((r) => r.scenarios.filter((s) => s.name === 'list-global'));
  const plain = rounds('plain');
  const gzip = rounds('gzip');
  if (plain.length && gzip.length) {
    const rateOf = (ss: typeof plain) =>
      ss.reduce((sum, s) => sum + s.service.requestsPerSecond, 0) / ss.length;
    const rate = r2(rateOf(gzip) / rateOf(plain));
    const each = (ss: typeof plain) => ss.map((s) => s.service.requestsPerSecond).join(', ');
    out.push({
      target: 'list-global (100k) with gzip ≥ 0.9 of its rate without',
      measured: `${rate} (${each(gzip)} ÷ ${each(plain)} req/s, alternated, --service-only)`,
      met: rate >= 0.9,
    });
    const [p, g] = [plain[0]!, gzip[0]!];
    if (p.wireBytes && g.wireBytes) {
      const size = r2(g.wireBytes.bytes / p.wireBytes.bytes);
      out.push({
        target: 'a 50-listing page with gzip ≤ 0.25 of its bytes without',
        measured: `${size} (${g.wireBytes.bytes} of ${p.wireBytes.bytes} bytes, ${g.wireBytes.encoding})`,
        met: g.wireBytes.encoding === 'gzip' && size <= 0.25,
      });
    }
  }
  // The page against the peer's, over every pair the matrix measured on one dataset (bench/all.ts
  // takes three: postgres-100k, then postgres-100k-peer-2 and -3, each ours then the peer's; single
  // runs of 10 s spread 10 to 20 %): the sums of both rates.
  const dataset = (label: string) => label.replace(/-peer-\d+$/, '');
  const groups = new Map<string, (typeof peered)[number][1][]>();
  for (const [run, s] of peered) {
    const key = `${s.name} (${dataset(run.label)})`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, pairs] of groups) {
    const sum = (rates: number[]) => rates.reduce((a, b) => a + b, 0);
    const ours = pairs.map((s) => s.service.requestsPerSecond);
    const theirs = pairs.map((s) => s.peer!.withoutTotals.requestsPerSecond);
    const ratio = r2(sum(ours) / sum(theirs));
    const each = pairs.map((_, i) => `${ours[i]} ÷ ${theirs[i]}`).join(', ');
    const totals = pairs.map((s) => s.peer!.withTotals.requestsPerSecond).join(', ');
    out.push({
      target: `${key} ÷ Platformatic DB without totals ≥ 1.0`,
      measured: `${ratio} (${each} req/s${pairs.length > 1 ? ', alternated' : ''}; peer with totals ${totals})`,
      met: ratio >= 1,
    });
  }
  for (const [label, limit] of [
    ['pglite-100k', 300],
    ['postgres-1m', 120],
  ] as const) {
    const run = runs.find((r) => r.label === label);
    if (run?.idleRssMb !== undefined) {
      out.push({
        target: `idle RSS, ${run.database}: < ${limit} MB`,
        measured: `${run.idleRssMb} MB`,
        met: run.idleRssMb < limit,
      });
    }
  }
  return out;
}

const ms = (m?: Measured) => (m ? `${m.p50} / ${m.p95} / ${m.p99}` : '');

/** The tables of docs/benchmarks.md. */
export function markdown(result: { runs: Run[]; targets: Target[] }): string {
  const lines: string[] = [];
  for (const run of result.runs) {
    lines.push(
      `\n#### ${run.label}: ${run.database}, ${run.listings.toLocaleString('en')} listings, ${run.connections} connections, ${run.durationS} s each\n`,
      '| scenario | req/s | p50 / p95 / p99 ms | DB limit req/s | × DB limit | HTTP limit req/s | × HTTP limit | listings/s | service CPU ms/req | RSS MB |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const s of run.scenarios) {
      lines.push(
        `| ${s.name} | ${s.service.requestsPerSecond} | ${ms(s.service)} | ${s.dbLimit?.requestsPerSecond ?? ''} | ${s.ratioToDbLimit ?? s.ratioToRawUpsert ?? ''} | ${s.httpLimit?.requestsPerSecond ?? ''} | ${s.ratioToHttpLimit ?? ''} | ${s.listingsPerSecond ?? ''}${s.rawListingsPerSecond ? ` (raw ${s.rawListingsPerSecond})` : ''} | ${s.serviceCpuMs ?? ''} | ${s.rssMb ?? ''} |`,
      );
      if (s.peer) {
        for (const [what, m] of [
          ['with totals', s.peer.withTotals],
          ['without totals', s.peer.withoutTotals],
        ] as const)
          lines.push(
            `| ↳ peer (Platformatic DB) ${what} | ${m.requestsPerSecond} | ${ms(m)} | | | | | | | |`,
          );
      }
      if (s.peerInsert)
        lines.push(
          `| ↳ peer (Platformatic DB) single insert | ${s.peerInsert.requestsPerSecond} | ${ms(s.peerInsert)} | | | | | ${s.peerInsert.requestsPerSecond} | | |`,
        );
      if (s.wireBytes && s.wireBytes.encoding !== 'identity')
        lines.push(
          `| ↳ page on the wire | ${s.wireBytes.encoding}, ${s.wireBytes.bytes} bytes | | | | | | | | |`,
        );
    }
  }
  lines.push('\n#### Targets\n', '| target | measured | met |', '|---|---|---|');
  for (const t of result.targets) lines.push(`| ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
  return `${lines.join('\n')}\n`;
}

/** What bench/webhooks.ts prints. */
export interface WebhookResult {
  endpoints: number;
  latency: Record<'one' | 'many', { p50: number; p99: number; max: number; samples: number }>;
  throughput: { none: number[]; all: number[]; ratio: number; catchUpMs: number[] };
}

/** The targets of issue 19. */
export function webhookTargets(w: WebhookResult): Target[] {
  return [
    {
      target: 'webhooks, 1 endpoint: write acknowledged → delivered p99 < 2 s',
      measured: `${w.latency.one.p99} ms`,
      met: w.latency.one.p99 < 2000,
    },
    {
      target: `webhooks, ${w.endpoints} endpoints: write acknowledged → delivered p99 < 2 s`,
      measured: `${w.latency.many.p99} ms`,
      met: w.latency.many.p99 < 2000,
    },
    {
      target: `webhooks: write throughput with ${w.endpoints} endpoints ≥ 0.95 × none`,
      measured: `${w.throughput.ratio}`,
      met: w.throughput.ratio >= 0.95,
    },
  ];
}

export function webhookMarkdown(w: WebhookResult): string {
  return [
    `\n#### Webhooks: ${w.endpoints} endpoints (5 partners × 20), PostgreSQL\n`,
    '| measure | p50 | p99 | max | deliveries |',
    '|---|---|---|---|---|',
    `| write acknowledged → delivered, 1 endpoint | ${w.latency.one.p50} ms | ${w.latency.one.p99} ms | ${w.latency.one.max} ms | ${w.latency.one.samples} |`,
    `| write acknowledged → delivered, ${w.endpoints} endpoints | ${w.latency.many.p50} ms | ${w.latency.many.p99} ms | ${w.latency.many.max} ms | ${w.latency.many.samples} |`,
    '',
    `PUT writes/s with no endpoint delivering: ${w.throughput.none.join(', ')}; with ${w.endpoints}: ${w.throughput.all.join(', ')}; ratio ${w.throughput.ratio}. After each ${w.endpoints}-endpoint run the deliveries caught up in ${w.throughput.catchUpMs.map((m) => `${(m / 1000).toFixed(1)} s`).join(', ')}.`,
    '',
  ].join('\n');
}

/** bench/request-records.ts: the cost of keeping request records, at a fixed rate. */
export interface RecordsResult {
  rate: number;
  durationS: number;
  rounds: number;
  on: { p50: number; p99: number };
  off: { p50: number; p99: number };
  p99OverheadMs: number;
  p99SpreadOffMs: number;
}

export function recordsTargets(r: RecordsResult): Target[] {
  return [
    {
      target: `request records: p99 overhead at ${r.rate} requests/s < 1 ms`,
      measured: `${r.p99OverheadMs} ms`,
      met: r.p99OverheadMs < 1,
    },
  ];
}

export function recordsMarkdown(r: RecordsResult): string {
  return [
    `\n#### Request records: ${r.rate} requests/s (half refused with 400 and recorded), PostgreSQL\n`,
    '| recording | p50 | p99 |',
    '|---|---|---|',
    `| off (REQUEST_RECORDS_RETENTION_DAYS=0) | ${r.off.p50} ms | ${r.off.p99} ms |`,
    `| on (every failure kept) | ${r.on.p50} ms | ${r.on.p99} ms |`,
    '',
    `Medians of ${r.rounds} alternated runs of ${r.durationS} s each; p99 overhead ${r.p99OverheadMs} ms (the p99s of identical runs with recording off spread over ${r.p99SpreadOffMs} ms).`,
    '',
  ].join('\n');
}
