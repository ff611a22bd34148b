import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../config.js';
import { createLogger } from '../log.js';
import { start } from '../runtime.js';
import { type DemoImageServer, startDemoImageServer } from './image-server.js';
import { type DemoSecrets, seedDemo } from './seed.js';

/** Where the demo keeps the secrets it printed, so that a restart can print the same ones again. */
const SECRETS_FILE = 'demo-secrets.json';

/** `npm run demo`: the service on the embedded database with demo data, and how to call it. */
export async function runDemo(env: Record<string, string | undefined>): Promise<void> {
  // The demo is where partners try webhooks (docs/contract.md#the-demo): a receiver on their own machine
  // (http://127.0.0.1:…) is admitted. Loopback only: other private addresses stay refused.
  // Its listings' images are served by the demo itself on a loopback address (image-server.ts), so
  // the checker must be allowed loopback image URLs too: nothing else private.
  const config = parseConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true', IMAGE_CHECK_ALLOW_LOOPBACK: 'true', ...env });
  const logger = createLogger(config);
  const secretsFile = path.resolve(config.DATA_DIR, SECRETS_FILE);
  // Up before the service, so that the first checks find it.
  const images = await startImages(config.PORT, readImagePort(secretsFile), logger);
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(config, logger);
  } catch (error) {
    await images.close();
    throw error;
  }
  if (config.WEBHOOK_ALLOW_LOOPBACK) {
    logger.warn(
      { webhookTargets: 'public and loopback' },
      'demo: webhook endpoints may use loopback addresses, with http (http://127.0.0.1:PORT/...), to try deliveries on this machine; a production service takes public https addresses only',
    );
  }
  const { readOnlySecret, readWriteSecret, testSecret, seeded, secrets } = await seedDemo(running.useCases, {
    earlier: readSecrets(secretsFile),
    imageOrigin: images.origin,
  });
  // The data directory already holds the generated admin token the same way (mode 0600): demo
  // secrets of a demo database, kept so a restart does not break what the partner exported.
  writeFileSync(
    secretsFile,
    `${JSON.stringify({ readOnly: readOnlySecret, readWrite: readWriteSecret, test: testSecret, imagePort: images.port })}\n`,
    {
      mode: 0o600,
    },
  );
  const cert = path.resolve(config.TLS_CERT_FILE ?? path.join(config.DATA_DIR, 'tls', 'localhost-cert.pem'));
  const base = `${running.url}/api/external/v1`;
  const secretsNote = seeded
    ? `(new secrets, kept in ${secretsFile}: a restart prints the same ones)`
    : secrets === 'kept'
      ? `(the SAME secrets as the last run, from ${secretsFile})`
      : `(NEW secrets: the ones an earlier run printed no longer work; ${secretsFile} was missing or out of date)`;
  const webhooksNote = config.WEBHOOK_ALLOW_LOOPBACK
    ? `
Webhooks: the read-write partner's secrets may register endpoints (scope manage:webhooks; its
test secret's are test endpoints, for its test listings only), and this demo
delivers to loopback addresses over http too (http://127.0.0.1:PORT/...), so a receiver on this
machine works; a production service takes public https addresses only. docs/webhooks.md and
\`forecourt listen\` show how.
`
    : '';
  process.stdout.write(`
Forecourt demo is running at ${running.url} (${seeded ? 'demo data created' : 'existing demo data'}).

  Read-only partner secret:   ${readOnlySecret}
  Read-write partner secret:  ${readWriteSecret}
  Its test secret:            ${testSecret}
  ${secretsNote}

The test secret is the read-write partner working on its own test data (docs/test-mode.md): what
it writes no live secret ever sees, answers carry Forecourt-Mode: test, and DELETE /test-data
wipes it. The partner guide starts with it; going live changes only the secret.

In another terminal, these lines set what docs/partner-guide.md uses:

  export FORECOURT_URL=${running.url}
  export FORECOURT_API=${base}
  export FORECOURT_CA=${cert}
  export FORECOURT_TEST_SECRET=${testSecret}
  export FORECOURT_SECRET=${readWriteSecret}
  export FORECOURT_READ_SECRET=${readOnlySecret}

API reference in your browser: ${running.url}/docs (accept the self-signed certificate)
Operator console: ${running.url}/console (sign in with the admin token: ${running.adminToken})

Images: the demo serves its listings' sample photos itself at ${images.origin}/demo-images/, and
checks them within seconds: every state shows (docs/images.md#the-demo). Listings that cannot go
live, with their reasons: ${base}/listings?readiness=not_live
${webhooksNote}
Try it (the write with the test secret: a test listing, which only that secret reads):

  curl --cacert ${cert} -H "Authorization: Bearer ${readOnlySecret}" \\
    "${base}/listings?pageSize=2"

  curl --cacert ${cert} -X PUT -H "Authorization: Bearer ${testSecret}" \\
    -H "Content-Type: application/json" \\
    -d '{"title":"Volkswagen Golf 1.5 TSI","price":21950,"brand":"Volkswagen","model":"Golf","year":2021,"dealerLocationCode":"VDB-GENT"}' \\
    "${base}/listings/MY-REF-1"

Press Ctrl+C to stop.
`);
  const stop = () => {
    running
      .close()
      .then(() => images.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * The image server on the port the demo's listings were seeded with (kept beside the secrets), so
 * their URLs keep working across restarts; the first time, the port after the service's (8444 by
 * default), or any free port when the service's is chosen at random (PORT=0). When that port is
 * taken, any free one: new listings work, the seeded ones' images become `unreachable`.
 */
async function startImages(
  servicePort: number,
  kept: number | undefined,
  logger: ReturnType<typeof createLogger>,
): Promise<DemoImageServer> {
  const wanted = kept ?? (servicePort > 0 && servicePort < 65535 ? servicePort + 1 : 0);
  try {
    return await startDemoImageServer(wanted);
  } catch (error) {
    if (wanted === 0 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    const server = await startDemoImageServer(0);
    logger.warn(
      { wanted, port: server.port },
      `demo: port ${wanted} for the sample images is taken; they are served on ${server.port}, and the image URLs of listings seeded earlier will be unreachable`,
    );
    return server;
  }
}

/** The image server's port an earlier run kept, if any. */
function readImagePort(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const port = (JSON.parse(readFileSync(file, 'utf8')) as { imagePort?: unknown }).imagePort;
    return typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** The secrets an earlier run kept, when the file is there and readable. */
function readSecrets(file: string): DemoSecrets | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoSecrets>;
    // A file from before the demo issued a test secret has none: `test` fails the check, and the
    // demo issues fresh secrets (and says so).
    return typeof parsed.readOnly === 'string' && typeof parsed.readWrite === 'string'
      ? { readOnly: parsed.readOnly, readWrite: parsed.readWrite, test: String(parsed.test ?? '') }
      : undefined;
  } catch {
    return undefined;
  }
}
