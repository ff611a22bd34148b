import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { startService } from './lib/processes.js';
const d = JSON.parse(readFileSync('/work/main/bench/.data/bench_100k.json', 'utf8'));
const s = await startService({ DATABASE_URL: 'postgres://root@127.0.0.1:5432/bench_100k' });
for (let i = 0; i < 8; i++) {
  const t = performance.now();
  const r = await request(`${s.url}/api/external/v1/listings?pageSize=50&status=active`, { dispatcher: s.dispatcher, headers: { authorization: `Bearer ${d.globalSecret}` } });
  const b = await r.body.text();
  console.log(r.statusCode, b.length, Buffer.byteLength(b), (performance.now() - t).toFixed(1), r.headers['content-length'], r.headers['transfer-encoding']);
}
await s.stop();
