/**
 * Where a service's CPU went: a summary of a V8 CPU profile (`--cpu-prof`), by package or source
 * file and by function, as milliseconds per request.
 *
 *   BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node --import tsx bench/run.ts … --only list-global
 *   node --import tsx bench/profile.ts /tmp/prof/CPU.*.cpuprofile --requests 1234 [--top 25]
 *
 * `--requests`: how many requests the profiled process served (the run's JSON says), to turn
 * totals into a cost per request. Without it, totals are shown.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: 'string' }, top: { type: 'string', default: '25' } },
});
if (positionals.length === 0) throw new Error('usage: bench/profile.ts <file.cpuprofile> [--requests N]');

/** The bucket a frame belongs to: a package, one of our folders, Node's internals or V8's own. */
function bucket(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const ours = /\/(src|dist)\/(.+?)(?:\.[jt]s)?$/.exec(url);
  if (ours) return `src/${ours[2]!.split('/').slice(0, -1).join('/') || '.'}`;
  return url.split('/').slice(-2).join('/');
}

const self = new Map<string, number>();
const buckets = new Map<string, number>();
let total = 0;
let idle = 0;
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      return;
    }
    total += us;
    const b = bucket(url, functionName);
    buckets.set(b, (buckets.get(b) ?? 0) + us);
    const key = `${functionName || '(anonymous)'} ${b}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + us);
  });
}

const requests = values.requests ? Number(values.requests) : undefined;
const unit = requests ? 'ms/request' : 'ms';
const fmt = (us: number) => (requests ? (us / 1000 / requests).toFixed(3) : (us / 1000).toFixed(0));
const top = Number(values.top);
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title} (${unit}, share of busy CPU)`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${fmt(us).padStart(9)}  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
};
console.log(`busy ${fmt(total)} ${unit}; idle ${(idle / 1000).toFixed(0)} ms`);
print('by package or folder', buckets);
print('by function (self time)', self);
