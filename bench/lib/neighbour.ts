/**
 * The busy neighbour of bench/test-mode.ts, in a process of its own: one partner's traffic at a
 * fixed rate (autocannon's overallRate), made of list pages (`reads` of the requests, half by
 * default), single PUTs of existing listings and bulk upserts of 100 existing listings (the rest,
 * four to one), every write a real change (the mileage moves). The same load whichever secret it gets: with the test secret
 * it works on the partner's test listings, with the live one on its live listings.
 *
 *   node --import tsx bench/lib/neighbour.ts '{"url":…,"secret":…,"rate":50,"prefix":…,"references":1000}'
 * Prints "ready" once started; on a line "stop" on stdin it stops and prints its figures as JSON.
 */
import autocannon from 'autocannon';
import { summarize } from './load.js';
import { listingBody } from './scenarios.js';

interface Options {
  url: string;
  secret: string;
  /** Requests a second, all kinds together. */
  rate: number;
  /** The written references are `${prefix}${i}`, i < references: listings that exist already. */
  prefix: string;
  references: number;
  /** The share of list pages among the requests, 0 to 1. */
  reads: number;
}

const options = JSON.parse(process.argv[2]!) as Options;
const API = '/api/external/v1';
const headers = { authorization: `Bearer ${options.secret}`, 'content-type': 'application/json' };
let n = 0;
const reference = (i: number) => `${options.prefix}${i % options.references}`;

interface Stream {
  kind: string;
  rate: number;
  latencies: number[];
  errors: number;
  limited: number;
  instance?: autocannon.Instance & Promise<autocannon.Result>;
}

function stream(kind: string, share: number, request: autocannon.Request): Stream | undefined {
  const rate = Math.round(options.rate * share);
  if (rate < 1) return undefined;
  const s: Stream = { kind, rate, latencies: [], errors: 0, limited: 0 };
  s.instance = autocannon({
    url: options.url,
    // Enough connections to keep the rate while a request waits; each sends rate ÷ connections a second.
    connections: Math.min(rate, 4),
    overallRate: rate,
    duration: 3600,
    headers,
    requests: [request],
  } as autocannon.Options) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  s.instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) s.latencies.push(ms);
    else if (status === 429) s.limited++;
    else s.errors++;
  });
  return s;
}

const started = performance.now();
const reads = options.reads;
const streams = [
  stream('list', reads, { method: 'GET', path: `${API}/listings?pageSize=50&status=active` }),
  stream('put', (1 - reads) * 0.8, {
    method: 'PUT',
    setupRequest: (req) => {
      const i = n++;
      req.path = `${API}/listings/${reference(i)}`;
      req.body = JSON.stringify(listingBody(reference(i), i));
      return req;
    },
  }),
  stream('bulk-100', (1 - reads) * 0.2, {
    method: 'POST',
    path: `${API}/listings/bulk-upsert`,
    setupRequest: (req) => {
      const first = n;
      n += 100;
      req.body = JSON.stringify(
        Array.from({ length: 100 }, (_, k) => listingBody(reference(first + k), first + k)),
      );
      return req;
    },
  }),
].filter((s) => s !== undefined);
process.stdout.write('ready\n');

let input = '';
process.stdin.on('data', async (chunk: Buffer) => {
  input += chunk.toString();
  if (!input.includes('stop')) return;
  process.stdin.pause();
  const seconds = (performance.now() - started) / 1000;
  for (const s of streams) s.instance!.stop();
  const results = await Promise.all(streams.map((s) => s.instance!));
  const out = streams.map((s, i) => ({
    kind: s.kind,
    askedPerSecond: s.rate,
    ...summarize(s.latencies, seconds, s.errors + results[i]!.errors + results[i]!.timeouts),
    rateLimited: s.limited,
  }));
  process.stdout.write(`${JSON.stringify({ seconds: Math.round(seconds * 10) / 10, streams: out })}\n`);
  process.exit(0);
});
