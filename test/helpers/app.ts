import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import { type Config, parseConfig } from '../../src/config.js';
import { createLogger, type Running, start } from '../../src/runtime.js';
import { httpsCall } from './https-call.js';
import { embedded, seedEmbeddedDb } from './pglite-template.js';

/**
 * Boots the real service (real database, real HTTPS listener on a free port) the way
 * `forecourt serve` does. The database is PGlite in a fresh temp dir, or PostgreSQL when the
 * DATABASE_URL environment variable is set (then test files share it: use unique codes).
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
  options: { dataDir?: string; keepData?: boolean } = {},
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
    ...env,
  });
  const running = await start(config, createLogger(config));
  const ca = readFileSync(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
  const dispatcher = new Agent({ connect: { ca, servername: 'localhost' } });
  const url = `https://127.0.0.1:${running.port}`;
  const adminToken = running.adminToken;

  const call = (method: string, urlPath: string, options: CallOptions = {}): Promise<Reply> =>
    httpsCall(url, dispatcher, method, urlPath, {
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
    dispatcher,
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
      await dispatcher.close();
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Limits count per calendar minute: start a sequence early enough in one that it cannot roll over. */
export async function freshWindow(neededS = 15): Promise<void> {
  const into = (Date.now() % 60_000) / 1000;
  if (into > 60 - neededS) await new Promise((r) => setTimeout(r, (60 - into + 0.2) * 1000));
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
