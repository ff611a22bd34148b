import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UsageError } from '../import/errors.js';

export const LISTEN_USAGE = `Usage: forecourt listen --forward-to URL --url URL --secret SECRET [options]

Follows your listings' changes with sync cursors (GET /listings?status=all) and delivers them to a
URL on your machine exactly as the service's webhooks would: the same body, the same Standard
Webhooks headers (webhook-id, webhook-timestamp, webhook-signature), at most 100 listings a
delivery, in order, the next only after a 2xx, retried with backoff while your receiver fails.
For developing a webhook receiver without a public address (docs/webhooks.md).

  --forward-to URL        where to POST deliveries, e.g. http://127.0.0.1:8787/hooks/forecourt
  --url URL               the service, e.g. https://api.example.com     (or FORECOURT_URL)
  --secret SECRET         an API secret with read:listings             (or FORECOURT_SECRET)
  --ca FILE               a PEM certificate to trust (self-signed)     (or FORECOURT_CA)
  --webhook-secret S      sign with this whsec_ secret                 (or FORECOURT_WEBHOOK_SECRET)
  --webhook-secret-file F read the whsec_ secret from F; when F does not exist, a new one is
                          written there (mode 0600), so the next run signs with the same one
                          (without either, a new secret is made and printed at start)
  --from now|start        now (default): changes from now on, as a new webhook endpoint gets;
                          start: every listing in your scope first, then the changes
  --events TYPES          comma-separated event types to forward (default listings.changed), e.g.
                          listings.changed,listing.images_checked,listing.readiness_changed:
                          the other types are read from GET /events and forwarded one type a
                          delivery, as the service sends them
  --interval-ms N         how often to ask for changes once caught up (default 1000)
  --max-backoff-ms N      while the service does not answer, the longest wait between attempts
                          (default 30000); it is retried for as long as it is away
  --show-secret           print the signing secret in full (default: whsec_ and 3 characters;
                          the whole secret is in the file named beside it)
  -h, --help              this text

The service being away (no answer, 5xx) stops nothing: one line says so, one says when it is back.
Ctrl-C stops it. Exit codes: 2 bad options, or the service refused the secret, scope or certificate.
`;

const OPTIONS = {
  'forward-to': { type: 'string' },
  url: { type: 'string' },
  secret: { type: 'string' },
  ca: { type: 'string' },
  'webhook-secret': { type: 'string' },
  'webhook-secret-file': { type: 'string' },
  from: { type: 'string', default: 'now' },
  events: { type: 'string', default: 'listings.changed' },
  'interval-ms': { type: 'string', default: '1000' },
  'max-backoff-ms': { type: 'string', default: '30000' },
  'show-secret': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export interface ListenSettings {
  forwardTo: string;
  url: string;
  secret: string;
  ca: string | undefined;
  /** The signing secret given (option, variable or file), or undefined: make a new one. */
  webhookSecret: string | undefined;
  /** Where to keep a new secret, when --webhook-secret-file names a file that does not exist yet. */
  webhookSecretFile: string | undefined;
  from: 'now' | 'start';
  /** The event types to forward: listings.changed (the sync walk) and/or types read from GET /events. */
  events: string[];
  intervalMs: number;
  /** The longest wait between attempts to reach a service that does not answer. */
  maxBackoffMs: number;
  /** Print the signing secret whole instead of masked. */
  showSecret: boolean;
}

export function listenSettings(
  argv: string[],
  env: Record<string, string | undefined>,
): ListenSettings | 'help' {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: false }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values } = parsed;
  if (values.help) return 'help';
  const forwardTo = values['forward-to'];
  const url = values.url ?? env.FORECOURT_URL;
  const secret = values.secret ?? env.FORECOURT_SECRET;
  if (!forwardTo) throw new UsageError('missing --forward-to (the local URL your receiver listens on)');
  if (!url) throw new UsageError('missing --url (or FORECOURT_URL)');
  if (!secret) throw new UsageError('missing --secret (or FORECOURT_SECRET)');
  for (const [name, value] of [
    ['--forward-to', forwardTo],
    ['--url', url],
  ] as const) {
    let parsedUrl: URL;
    try {
      parsedUrl = new URL(value);
    } catch {
      throw new UsageError(`${name} "${value}" is not a URL`);
    }
    if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') {
      throw new UsageError(`${name} "${value}" is not an http or https URL`);
    }
  }
  if (values.from !== 'now' && values.from !== 'start') {
    throw new UsageError(`--from must be now or start, got "${values.from}"`);
  }
  const events = [...new Set(values.events.split(',').map((t) => t.trim()))].filter(Boolean);
  if (events.length === 0 || events.some((t) => !/^[a-z]+(\.[a-z_]+)+$/.test(t))) {
    throw new UsageError(`--events must name event types separated by commas, got "${values.events}"`);
  }
  const intervalMs = Number(values['interval-ms']);
  if (!Number.isInteger(intervalMs) || intervalMs < 50 || intervalMs > 60_000) {
    throw new UsageError(
      `--interval-ms must be a whole number from 50 to 60000, got "${values['interval-ms']}"`,
    );
  }
  const maxBackoffMs = Number(values['max-backoff-ms']);
  if (!Number.isInteger(maxBackoffMs) || maxBackoffMs < 100 || maxBackoffMs > 600_000) {
    throw new UsageError(
      `--max-backoff-ms must be a whole number from 100 to 600000, got "${values['max-backoff-ms']}"`,
    );
  }
  if (values['webhook-secret'] && values['webhook-secret-file']) {
    throw new UsageError('choose one of --webhook-secret and --webhook-secret-file');
  }
  const file = values['webhook-secret-file'];
  const given =
    values['webhook-secret'] ??
    (file && existsSync(file) ? readSecretFile(file) : undefined) ??
    (file ? undefined : env.FORECOURT_WEBHOOK_SECRET);
  if (given !== undefined && !/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(given)) {
    throw new UsageError(
      'the webhook secret must be whsec_ followed by the base64 of 24 to 64 random bytes (as the service issues them)',
    );
  }
  return {
    forwardTo,
    url,
    secret,
    ca: values.ca ?? env.FORECOURT_CA,
    webhookSecret: given,
    webhookSecretFile: file && given === undefined ? file : undefined,
    from: values.from,
    events,
    intervalMs,
    maxBackoffMs,
    showSecret: values['show-secret'],
  };
}

function readSecretFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(`cannot read --webhook-secret-file ${file}: ${(error as Error).message}`);
  }
}
