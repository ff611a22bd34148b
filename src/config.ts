import { z } from 'zod';

// Belgium's public mileage-history certificates; override per market with HISTORY_REPORT_HOSTS.
const DEFAULT_HISTORY_REPORT_HOSTS = ['www.car-pass.be', 'car-pass.be'];

const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['', '1', '0', 'true', 'false', 'yes', 'no'].includes(v), 'must be true or false')
  .transform((v) => ['1', 'true', 'yes'].includes(v));

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/**
 * Every setting of the service, read from the environment once at start. A bad value stops
 * start-up with a message naming the variable (see parseConfig).
 */
const schema = z.object({
  PORT: int(0, 65535).default(8443),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
      .optional(),
  ),
  // Read-only partner endpoints (listings, location counts) may use a replica; see docs/operations.md.
  DATABASE_READ_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
      .optional(),
  ),
  // Behind a connection pooler (docs/operations.md, "Behind a connection pooler"): the same
  // database without the pooler, for what needs a real session (LISTEN, migrations); and what
  // DATABASE_URL (and DATABASE_READ_URL) lead to: a session each (PostgreSQL itself, or a pooler
  // in session mode) or a pooler in transaction mode.
  DATABASE_DIRECT_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
      .optional(),
  ),
  DATABASE_POOL_MODE: z.enum(['session', 'transaction']).default('session'),
  TLS_CERT_FILE: optionalString,
  TLS_KEY_FILE: optionalString,
  TRUST_PROXY: flag.default(false),
  ADMIN_TOKEN: optionalString.pipe(z.string().min(24, 'must be at least 24 characters').optional()),
  HISTORY_REPORT_HOSTS: z
    .string()
    .default(DEFAULT_HISTORY_REPORT_HOSTS.join(','))
    .transform((v) =>
      v
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[a-z0-9.-]+$/, 'must be a comma-separated list of host names')).min(1)),
  PUBLIC_LISTING_BASE_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  RATE_LIMIT_PER_MINUTE: int(1, 1_000_000).default(600),
  AUTH_FAILURE_LIMIT_PER_MINUTE: int(1, 1_000_000).default(20),
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
      .optional(),
  ),
  REDIS_TIMEOUT_MS: int(10, 10_000).default(250),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Log lines held while stdout is not taking them; beyond it new lines are dropped and counted
  // (src/log.ts), never waited for.
  LOG_BUFFER_BYTES: int(65_536, 1_073_741_824).default(16_777_216),
  // Limits. The defaults of Node, Fastify and PostgreSQL leave several of these unbounded.
  STATEMENT_TIMEOUT_MS: int(100, 600_000).default(10_000),
  DB_CONNECT_TIMEOUT_MS: int(100, 120_000).default(5_000),
  DB_POOL_SIZE: int(1, 200).default(10),
  REQUEST_TIMEOUT_MS: int(1_000, 600_000).default(30_000),
  HEADERS_TIMEOUT_MS: int(1_000, 120_000).default(10_000),
  KEEP_ALIVE_TIMEOUT_MS: int(1_000, 600_000).default(65_000),
  SHUTDOWN_TIMEOUT_MS: int(1_000, 600_000).default(25_000),
  // Every write transaction commits within this time or is rolled back, so none of ours holds sync
  // cursors longer; twice it is the clock rule's slack where a writer cannot be seen (docs/sync.md).
  WRITE_TX_TIMEOUT_MS: int(200, 60_000).default(5_000),
  // Webhooks (docs/webhooks.md). ALLOW_PRIVATE admits http:// and private or loopback targets:
  // tests and local development only, never in production (it opens the door to SSRF).
  WEBHOOK_ALLOW_PRIVATE: flag.default(false),
  // The demo's setting: loopback webhook addresses (http too), so deliveries reach a partner's laptop.
  WEBHOOK_ALLOW_LOOPBACK: flag.default(false),
  WEBHOOK_TIMEOUT_MS: int(1_000, 30_000).default(10_000),
  // Deliveries one instance runs at once; 0: this instance delivers none (the others do).
  WEBHOOK_CONCURRENCY: int(0, 500).default(16),
  // Image checks (docs/images.md): fetches one instance runs at once; 0: this instance checks none.
  IMAGE_CHECK_CONCURRENCY: int(0, 500).default(8),
  // As WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_LOOPBACK, for image URLs (tests, the demo).
  IMAGE_CHECK_ALLOW_PRIVATE: flag.default(false),
  IMAGE_CHECK_ALLOW_LOOPBACK: flag.default(false),
  // The whole fetch of one image, redirects and body included (docs/images.md, "How an image is fetched").
  IMAGE_CHECK_TIMEOUT_MS: int(500, 60_000).default(20_000),
  // Failed partner requests and per-minute usage are kept this many days; 0: none are kept.
  REQUEST_RECORDS_RETENTION_DAYS: int(0, 365).default(7),
  // Failed requests kept one by one per partner and minute (per instance); the rest are counted.
  REQUEST_RECORDS_PER_MINUTE: int(1, 100_000).default(1_000),
  // The embedded database's own autovacuum (store/pglite-maintenance.ts): a check this often; 0: never.
  EMBEDDED_VACUUM_INTERVAL_MS: int(0, 3_600_000)
    .refine((v) => v === 0 || v >= 100, 'must be 0 (never) or at least 100')
    .default(5_000),
  // Processes that serve the port together (node:cluster), for machines with cores to spare.
  WORKERS: int(1, 64).default(1),
});

export type Config = Readonly<z.infer<typeof schema>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  // An empty variable counts as unset, as most operators expect of `FOO=` in a .env file; so does
  // one of white space only (`PORT=" "` was read as 0: a random port; a retention of 0 days).
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''),
  );
  const result = schema.safeParse(present);
  if (!result.success) {
    // One line, every bad variable in it: start-up failures are one line (docs/operations.md).
    const parts = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${parts.join('; ')}`);
  }
  if (result.data.DATABASE_READ_URL && !result.data.DATABASE_URL) {
    throw new ConfigError('Invalid configuration: DATABASE_READ_URL needs DATABASE_URL (a replica of it)');
  }
  if (result.data.DATABASE_DIRECT_URL && !result.data.DATABASE_URL) {
    throw new ConfigError(
      'Invalid configuration: DATABASE_DIRECT_URL needs DATABASE_URL (the same database, through the pooler)',
    );
  }
  if (Boolean(result.data.TLS_CERT_FILE) !== Boolean(result.data.TLS_KEY_FILE)) {
    throw new ConfigError('Invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  if (result.data.WORKERS > 1 && !result.data.DATABASE_URL) {
    throw new ConfigError(
      'Invalid configuration: WORKERS above 1 needs DATABASE_URL (the embedded database serves one process)',
    );
  }
  if (result.data.WORKERS > 1 && !result.data.REDIS_URL) {
    throw new ConfigError(
      'Invalid configuration: WORKERS above 1 needs REDIS_URL (rate limits must be counted once for all worker processes, not per process)',
    );
  }
  return Object.freeze(result.data);
}
