/**
 * Deep sync cost: follows nextCursor through every listing a partner sees, one page after another
 * (as a partner's first full sync does), and compares the latency of the first pages with the last
 * ones; then page-number access at page 1 and at a deep page for contrast.
 *   node --import tsx bench/deep-sync.ts --url https://localhost:8443 --secret fc_... --ca data/tls/localhost-cert.pem
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'https://localhost:8443' },
    secret: { type: 'string' },
    ca: { type: 'string' },
    pageSize: { type: 'string', default: '50' },
    deepPage: { type: 'string', default: '400' },
  },
});
if (!values.secret) throw new Error('--secret is required');
const dispatcher = new Agent({
  connect: values.ca ? { ca: readFileSync(values.ca) } : { rejectUnauthorized: false },
});
const base = `${values.url}/api/external/v1/listings?status=all&pageSize=${values.pageSize}`;

async function get(url: string) {
  const started = performance.now();
  const res = await request(url, { dispatcher, headers: { authorization: `Bearer ${values.secret}` } });
  const body = (await res.body.json()) as {
    data: unknown[];
    pagination: { nextCursor?: string; hasMore?: boolean };
  };
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, body };
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const summary = (xs: number[]) => ({
  p50: +quantile(xs, 0.5).toFixed(2),
  p95: +quantile(xs, 0.95).toFixed(2),
});

const started = performance.now();
const times: number[] = [];
let cursor: string | undefined;
let items = 0;
for (;;) {
  const { ms, body } = await get(`${base}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  times.push(ms);
  items += body.data.length;
  cursor = body.pagination.nextCursor;
  if (!body.pagination.hasMore) break;
}
const window = Math.min(100, Math.floor(times.length / 4));
const first = times.slice(1, window + 1); // page 0 warms the connection
const last = times.slice(-window);

const pageTimes = async (page: number) => {
  const xs: number[] = [];
  for (let i = 0; i < 50; i++) xs.push((await get(`${base}&sort=updatedAt&page=${page}`)).ms);
  return summary(xs);
};
const result = {
  pages: times.length,
  items,
  totalSeconds: +((performance.now() - started) / 1000).toFixed(1),
  cursorFirstPagesMs: summary(first),
  cursorLastPagesMs: summary(last),
  cursorLastToFirstP50: +(quantile(last, 0.5) / quantile(first, 0.5)).toFixed(2),
  pageNumber1Ms: await pageTimes(1),
  [`pageNumber${values.deepPage}Ms`]: await pageTimes(Number(values.deepPage)),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
await dispatcher.close();
