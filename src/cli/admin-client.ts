import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { rootCertificates } from 'node:tls';
import { CliError, UsageError } from './output.js';

const ADMIN_PREFIX = '/api/admin/v1';
const TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

interface ConnectionOptions {
  url?: string | undefined;
  token?: string | undefined;
  ca?: string | undefined;
  insecure?: boolean | undefined;
}

export interface Issue {
  path: string;
  message: string;
  code?: string;
}

/** An error response of the admin API: `{error: {code, message, requestId, issues?}}`. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly issues: Issue[] = [],
  ) {
    super(message);
  }
}

const set = (value: string | undefined): string | undefined =>
  value !== undefined && value.trim() !== '' ? value.trim() : undefined;

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
}

/** The admin API of one running service: base URL, admin token and the TLS trust to use. */
export class AdminClient {
  private constructor(
    readonly baseUrl: URL,
    private readonly token: string,
    private readonly ca: string | string[] | undefined,
    private readonly insecure: boolean,
  ) {}

  /**
   * --url, else FORECOURT_URL, else https://localhost:$PORT. --token, else ADMIN_TOKEN, else the
   * token file the service generated in its data directory. --ca, else the service's own
   * self-signed certificate from the data directory (on top of the system CAs), else system CAs.
   */
  static resolve(options: ConnectionOptions, env: Record<string, string | undefined>): AdminClient {
    const raw = set(options.url) ?? set(env.FORECOURT_URL) ?? `https://localhost:${set(env.PORT) ?? 8443}`;
    let baseUrl: URL;
    try {
      baseUrl = new URL(raw);
    } catch {
      throw new UsageError(`"${raw}" is not a valid URL (expected e.g. https://localhost:8443)`);
    }
    if (baseUrl.protocol !== 'https:') {
      throw new UsageError(`the service URL must start with https:// (got "${raw}")`);
    }
    const dataDir = set(env.DATA_DIR) ?? './data';
    let token = set(options.token) ?? set(env.ADMIN_TOKEN);
    if (!token) {
      const file = path.resolve(dataDir, 'admin-token');
      if (!existsSync(file)) {
        throw new CliError(
          `no admin token: set ADMIN_TOKEN, pass --token, or run where the service's data directory is ` +
            `(${file} not found; the service writes it on first start when ADMIN_TOKEN is unset; ` +
            'set DATA_DIR if the data directory is elsewhere)',
        );
      }
      token = set(readText(file, 'the admin token file'));
      if (!token) throw new CliError(`the admin token file ${file} is empty`);
    }
    let ca: string | string[] | undefined;
    if (options.ca) {
      ca = readText(options.ca, 'the CA file');
    } else {
      const own = path.resolve(dataDir, 'tls', 'localhost-cert.pem');
      if (existsSync(own)) ca = [...rootCertificates, readText(own, "the service's certificate")];
    }
    return new AdminClient(baseUrl, token, ca, options.insecure === true);
  }

  /** Sends one request to `/api/admin/v1{path}` and returns the `data` of the response. */
  request<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', apiPath: string, body?: unknown): Promise<T> {
    const url = new URL(
      `${this.baseUrl.pathname.replace(/\/+$/, '')}${ADMIN_PREFIX}${apiPath}`,
      this.baseUrl,
    );
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {
      Accept: 'application/json',
      Authorization: `Bearer ${this.token}`,
      'User-Agent': 'forecourt-cli',
    };
    if (payload) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = payload.length;
    }
    return new Promise<T>((resolve, reject) => {
      const req = https.request(
        url,
        {
          method,
          headers,
          agent: false,
          timeout: TIMEOUT_MS,
          rejectUnauthorized: !this.insecure,
          ...(this.ca ? { ca: this.ca } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) req.destroy(new Error('the response is too large'));
            else chunks.push(chunk);
          });
          res.on('error', (error) => reject(this.failure(error)));
          res.on('end', () => {
            try {
              resolve(this.parse<T>(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('no response'), { code: 'ETIMEDOUT' })));
      req.on('error', (error) => reject(this.failure(error)));
      req.end(payload);
    });
  }

  private parse<T>(status: number, text: string): T {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new CliError(
        `${this.baseUrl.origin} answered ${status} with a body that is not JSON; is this the Forecourt service?`,
      );
    }
    const error = (body as { error?: Partial<ApiError> & { issues?: Issue[] } } | null)?.error;
    if (status >= 400 || error) {
      if (error && typeof error.code === 'string') {
        const issues = Array.isArray(error.issues) ? error.issues : [];
        throw new ApiError(status, error.code, String(error.message ?? ''), error.requestId, issues);
      }
      throw new CliError(`${this.baseUrl.origin} answered ${status} without an error description`);
    }
    if (body === null || typeof body !== 'object' || !('data' in body)) {
      throw new CliError(
        `${this.baseUrl.origin} answered ${status} without data; is this the Forecourt service?`,
      );
    }
    return (body as { data: T }).data;
  }

  /** Turns a socket or TLS failure into a message that says what to do about it. */
  private failure(error: Error & { code?: string }): CliError {
    if (error instanceof CliError) return error;
    const code = error.code ?? '';
    const where = this.baseUrl.origin;
    if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)) {
      return new CliError(
        `the TLS certificate of ${where} could not be verified (${code}: ${error.message}).\n` +
          'Pass --ca <file> with the certificate the service uses (its generated one is ' +
          '<DATA_DIR>/tls/localhost-cert.pem; set DATA_DIR to find it automatically), ' +
          'or --insecure to skip verification.',
      );
    }
    const reason = code === 'ETIMEDOUT' ? `no answer within ${TIMEOUT_MS / 1000} s` : code || error.message;
    return new CliError(
      `cannot reach the Forecourt service at ${where} (${reason}).\n` +
        'Is it running? Start it with `npm start` (or `forecourt serve`), ' +
        'or point to it with --url or FORECOURT_URL.',
    );
  }
}
