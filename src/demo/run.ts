import path from 'node:path';
import { parseConfig } from '../config.js';
import { createLogger, start } from '../runtime.js';
import { seedDemo } from './seed.js';

/** `npm run demo`: the service on the embedded database with demo data, and how to call it. */
export async function runDemo(env: Record<string, string | undefined>): Promise<void> {
  const config = parseConfig(env);
  const running = await start(config, createLogger(config));
  const { readOnlySecret, readWriteSecret, seeded } = await seedDemo(running.useCases);
  const cert = path.resolve(config.TLS_CERT_FILE ?? path.join(config.DATA_DIR, 'tls', 'localhost-cert.pem'));
  const base = `${running.url}/api/external/v1`;
  process.stdout.write(`
Forecourt demo is running at ${running.url} (${seeded ? 'demo data created' : 'existing demo data, fresh secrets'}).

  Read-only partner secret:   ${readOnlySecret}
  Read-write partner secret:  ${readWriteSecret}
  (secrets are shown only once; run the demo again for new ones)

In another terminal, these lines set what docs/partner-guide.md uses:

  export FORECOURT_URL=${running.url}
  export FORECOURT_API=${base}
  export FORECOURT_CA=${cert}
  export FORECOURT_SECRET=${readWriteSecret}
  export FORECOURT_READ_SECRET=${readOnlySecret}

API reference in your browser: ${running.url}/docs (accept the self-signed certificate)
Operator console: ${running.url}/console (sign in with the admin token: ${running.adminToken})

Try it:

  curl --cacert ${cert} -H "Authorization: Bearer ${readOnlySecret}" \\
    "${base}/listings?pageSize=2"

  curl --cacert ${cert} -X PUT -H "Authorization: Bearer ${readWriteSecret}" \\
    -H "Content-Type: application/json" \\
    -d '{"title":"Volkswagen Golf 1.5 TSI","price":21950,"brand":"Volkswagen","model":"Golf","year":2021,"dealerLocationCode":"VDB-GENT"}' \\
    "${base}/listings/MY-REF-1"

Press Ctrl+C to stop.
`);
  const stop = () => {
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
