import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dispatcher } from 'undici';
import { type Config, parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { type Running, start } from '../../src/runtime.js';
import { keptAliveClient } from './https-call.js';
import { embedded, seedEmbeddedDb } from './pglite-template.js';

/**
 * Boots the real service (real database, real HTTPS listener on a free port) the way
 * `forecourt serve` does. The database is PGlite in a fresh temp dir, or PostgreSQL when the
 * DATABASE_URL environment variable is set (then test files share it: use unique codes; with
 * DATABASE_DIRECT_URL and DATABASE_POOL_MODE too when DATABASE_URL is a pooler).
 */
/** The partner API's base path. */
export const EXT = '/api/external/v1';

export interface TestApp {
  url: string;
  config: Config;
  running: Running;
  dataDir: string;
  dispatcher: Dispatcher;
  /** Calls the service over HTTPS, trusting its generated certificate. */
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Calls the admin API with the operator token; throws unless the status is 2xx. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export interface CallOptions {
  secret?: string;
  headers?: Record<string, string>;
  /** A JSON value (sent with Content-Type: application/json) or a raw string body. */
  body?: unknown;
  raw?: string;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export async function bootApp(
  env: Record<string, string> = {},
  options: { dataDir?: string; keepData?: boolean; clock?: MovableClock } = {},
): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'forecourt-test-'));
  if (!options.dataDir && embedded(env)) await seedEmbeddedDb(dataDir);
  const config = parseConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PUBLIC_LISTING_BASE_URL: 'https://cars.example/listings',
    // Suites make thousands of requests, many with bad secrets on purpose, from one address;
    // test/rate-limits.test.ts sets real limits.
    RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // Behind a pooler (.ci/run's PgBouncer passes): the way around it, and its mode.
    ...(process.env.DATABASE_URL && process.env.DATABASE_DIRECT_URL
      ? { DATABASE_DIRECT_URL: process.env.DATABASE_DIRECT_URL }
      : {}),
    ...(process.env.DATABASE_POOL_MODE ? { DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE } : {}),
    // No image checks unless a test asks (test/image-*.test.ts): a result rewrites listings and
    // moves their sync position, which other tests' counts and walks do not expect.
    IMAGE_CHECK_CONCURRENCY: '0',
    ...env,
  });
  const running = await start(config, createLogger(config), options.clock ? { now: options.clock.now } : {});
  const ca = readFileSync(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
  const client = keptAliveClient(ca);
  const url = `https://127.0.0.1:${running.port}`;
  const adminToken = running.adminToken;

  const call = (method: string, urlPath: string, options: CallOptions = {}): Promise<Reply> =>
    client.call(url, method, urlPath, {
      ...options,
      headers: {
        ...(options.headers ?? {}),
        ...(options.secret ? { authorization: `Bearer ${options.secret}` } : {}),
      },
    });

  return {
    url,
    config,
    running,
    dataDir,
    get dispatcher() {
      return client.dispatcher;
    },
    call,
    async admin(method, urlPath, body) {
      const reply = await call(method, `/api/admin/v1${urlPath}`, {
        body,
        headers: { authorization: `Bearer ${adminToken}` },
      });
      if (reply.status >= 300) throw new Error(`admin ${method} ${urlPath} → ${reply.status} ${reply.text}`);
      return reply.body.data;
    },
    async close() {
      await running.close();
      await client.close();
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The clock of a service's rate-limit windows, for bootApp: `fresh()` moves it to the start of
 * the next minute, so a sequence of requests counts in one window without waiting for it.
 */
export interface MovableClock {
  now(): number;
  /** To just after the start of the next calendar minute (as the service counts it). */
  fresh(): void;
}

export function movableClock(): MovableClock {
  let offset = 0;
  const now = () => Date.now() + offset;
  return {
    now,
    fresh() {
      offset += 60_000 - (now() % 60_000) + 50;
    },
  };
}

/** A suffix that keeps codes unique when test files share one PostgreSQL database. */
export function unique(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}

export interface Tree {
  /** location code → profile id */
  ids: Record<string, string>;
  codes: Record<string, string>;
}

/**
 * Two groups, each with locations and one sub-location:
 *   A ─ A1 ─ A1a        B ─ B1
 *     └ A2
 * `codes.A` is the real (unique) location code of A, `ids.A` its id.
 */
export async function createTree(app: TestApp): Promise<Tree> {
  const codes: Record<string, string> = {};
  for (const key of ['A', 'A1', 'A1a', 'A2', 'B', 'B1']) codes[key] = unique(key);
  const node = (key: string, extra: Record<string, unknown> = {}, children: unknown[] = []) => ({
    locationCode: codes[key],
    displayName: `Dealer ${key}`,
    city: key.startsWith('A') ? 'Gent' : 'Utrecht',
    province: key.startsWith('A') ? 'Oost-Vlaanderen' : 'Utrecht',
    ...extra,
    children,
  });
  const result = await app.admin<{ dealers: { id: string; locationCode: string }[] }>(
    'POST',
    '/dealers/import',
    {
      dealers: [
        node('A', { companyName: 'Alpha Motors NV' }, [node('A1', {}, [node('A1a')]), node('A2')]),
        node('B', { companyName: 'Beta Cars BV' }, [node('B1')]),
      ],
    },
  );
  const ids: Record<string, string> = {};
  for (const [key, code] of Object.entries(codes))
    ids[key] = result.dealers.find((d) => d.locationCode === code)!.id;
  return { ids, codes };
}

/** Creates a partner through the admin API and returns its id and secret. */
export async function createPartner(
  app: TestApp,
  options: { roots?: string[]; global?: boolean; scopes?: string[]; name?: string },
): Promise<{ id: string; secret: string }> {
  const data = await app.admin<{ id: string; secret: string }>('POST', '/partners', {
    name: options.name ?? unique('partner'),
    ...(options.scopes ? { scopes: options.scopes } : {}),
    access: options.global
      ? { scope: 'global' }
      : { scope: 'restricted', rootProfileIds: options.roots ?? [] },
  });
  return { id: data.id, secret: data.secret };
}

export const ALL_SCOPES = ['read:listings', 'read:locations', 'write:listings'];

/** A minimal valid listing body. */
export function listingBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Volkswagen Golf 1.5 TSI',
    price: 19950,
    brand: 'Volkswagen',
    model: 'Golf',
    year: 2021,
    ...overrides,
  };
}
