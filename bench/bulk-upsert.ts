/**
 * Bulk-upsert throughput: CLIENTS concurrent clients each send BATCHES requests of 100 new
 * listings to POST /listings/bulk-upsert of a running service, one after another.
 *   node --import tsx bench/bulk-upsert.ts --url https://localhost:8443 --secret fc_... --ca data/tls/localhost-cert.pem
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'https://localhost:8443' },
    secret: { type: 'string' },
    ca: { type: 'string' },
    dealer: { type: 'string' },
    clients: { type: 'string', default: '4' },
    batches: { type: 'string', default: '50' },
  },
});
if (!values.secret) throw new Error('--secret is required');
const dispatcher = new Agent({
  connect: values.ca ? { ca: readFileSync(values.ca) } : { rejectUnauthorized: false },
});
const clients = Number(values.clients);
const batches = Number(values.batches);
const run = Date.now().toString(36);

function batch(client: number, n: number) {
  return Array.from({ length: 100 }, (_, i) => ({
    externalReference: `bulk-${run}-${client}-${n}-${i}`,
    ...(values.dealer ? { dealerProfileId: values.dealer } : {}),
    title: `Volkswagen Golf ${i}`,
    price: 10_000 + i,
    brand: 'Volkswagen',
    model: 'Golf',
    year: 2015 + (i % 10),
    mileage: 1000 * i,
    fuelType: 'petrol',
    images: [`https://img.example/${client}/${n}/${i}.jpg`],
    features: ['Navigation', 'Air conditioning'],
  }));
}

let written = 0;
let failed = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: clients }, async (_, client) => {
    for (let n = 0; n < batches; n++) {
      const res = await request(`${values.url}/api/external/v1/listings/bulk-upsert`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${values.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(batch(client, n)),
      });
      const body = (await res.body.json()) as { data?: { successCount: number; errorCount: number } };
      if (res.statusCode !== 200 || !body.data)
        throw new Error(`status ${res.statusCode}: ${JSON.stringify(body)}`);
      written += body.data.successCount;
      failed += body.data.errorCount;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
console.log(
  JSON.stringify({
    clients,
    batches,
    written,
    failed,
    seconds: Number(seconds.toFixed(2)),
    listingsPerSecond: Math.round(written / seconds),
  }),
);
await dispatcher.close();
