import { rootCertificates } from 'node:tls';
import { ForecourtError } from './errors.js';
import { backoffMs, rateLimitResetMs, requestedDelayMs, retryAfterMs, sleep } from './retry.js';
import type { CallOptions, ClientOptions, WaitInfo } from './types.js';

type Send = (url: string, init: RequestInit) => Promise<Response>;
export type CallFetch = (request: Request) => Promise<Response>;

export interface Transport {
  /** The fetch handed to openapi-fetch for one call: auth, retries, waits, that call's options. */
  forCall(options?: CallOptions & { onWait?: ClientOptions['onWait'] }): CallFetch;
}

const VERSION = '0.1.0';

/**
 * Every request goes through here. Retrying is safe for every operation of the partner API: reads
 * are reads, and every write is idempotent by design (PUT and bulk upsert replace by your
 * reference, a status change sets a value, DELETE is "mark sold"), so sending a request twice
 * leaves the same state as sending it once (at worst the second answer says `unchanged`).
 */
export function createTransport(options: ClientOptions, apiBaseUrl: string): Transport {
  if (!options.secret) throw new TypeError('@forecourt/client: `secret` is required');
  const apiBase = new URL(apiBaseUrl).pathname;
  const send = sender(options);
  const retries = options.retries ?? 4;
  const baseMs = options.backoffMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const fixedHeaders = {
    authorization: `Bearer ${options.secret}`,
    'user-agent': options.userAgent ?? `forecourt-client/${VERSION}`,
    accept: 'application/json',
  };
  // Set when an answer said RateLimit-Remaining: 0: the next request would only earn a 429, so
  // every call of this client waits for the window to end instead (shared: one budget per secret).
  let pausedUntil = 0;

  return {
    forCall(call = {}) {
      const maxRetries = call.maxRetries ?? retries;
      const onWait = call.onWait ?? options.onWait;
      const signal = call.signal;

      return async (request) => {
        const url = request.url;
        const info = { method: request.method, path: new URL(url).pathname.slice(apiBase.length) };
        // Read the body once: each attempt sends the same bytes.
        const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
        const headers: Record<string, string> = { ...Object.fromEntries(request.headers), ...fixedHeaders };
        if (call.requestId) headers['x-request-id'] = call.requestId;

        const wait = async (detail: Omit<WaitInfo, 'method' | 'path'>) => {
          await onWait?.({ ...info, ...detail });
          await sleep(detail.delayMs, signal);
        };

        for (let attempt = 1; ; attempt++) {
          const pause = pausedUntil - Date.now();
          if (pause > 0) await wait({ reason: 'pacing', attempt: 0, delayMs: Math.min(pause, maxDelayMs) });
          signal?.throwIfAborted();

          let response: Response;
          try {
            const timeout = AbortSignal.timeout(timeoutMs);
            response = await send(url, {
              method: request.method,
              headers,
              body,
              signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
            });
          } catch (error) {
            signal?.throwIfAborted();
            // A certificate the client does not accept is refused the same way on every attempt:
            // say how to fix it now rather than after 5 attempts and 6 seconds of backoff.
            const certificate = certificateProblem(error);
            if (certificate) {
              throw new ForecourtError(
                0,
                { code: 'TLS_CERTIFICATE_ERROR', message: `${info.method} ${url}: ${certificate}` },
                { cause: error },
              );
            }
            if (attempt > maxRetries) {
              throw new ForecourtError(
                0,
                {
                  code: 'NETWORK_ERROR',
                  message: `${info.method} ${url}: no answer after ${attempt} attempt(s): ${describe(error)}`,
                },
                { cause: error },
              );
            }
            await wait({
              reason: 'network-error',
              attempt,
              delayMs: backoffMs(attempt, baseMs, maxDelayMs),
              error,
            });
            continue;
          }

          if (response.headers.get('ratelimit-remaining') === '0') {
            const reset = rateLimitResetMs(response.headers);
            if (reset !== undefined) pausedUntil = Date.now() + reset;
          }
          const retryable = response.status === 429 || response.status >= 500;
          if (!retryable || attempt > maxRetries) return response;

          // Drain the failed answer so its connection can be reused.
          await response.arrayBuffer().catch(() => undefined);
          const requestedMs =
            retryAfterMs(response.headers) ??
            (response.status === 429 ? rateLimitResetMs(response.headers) : undefined);
          await wait({
            reason: response.status === 429 ? 'rate-limited' : 'server-error',
            attempt,
            status: response.status,
            delayMs:
              requestedMs === undefined
                ? backoffMs(attempt, baseMs, maxDelayMs)
                : requestedDelayMs(requestedMs, maxDelayMs),
            ...(requestedMs === undefined ? {} : { requestedMs }),
          });
          // The wait covered the window the 429 spoke of; pacing need not wait for it again.
          if (response.status === 429) pausedUntil = 0;
        }
      };
    },
  };
}

/** OpenSSL's and Node's codes for a certificate the connection did not accept. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
]);
const OTHER_CERTIFICATE: Record<string, string> = {
  CERT_HAS_EXPIRED: 'the certificate has expired (or this computer’s clock is wrong)',
  CERT_NOT_YET_VALID: 'the certificate is not valid yet (or this computer’s clock is wrong)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate is not for this host name: use the name it was issued for',
  HOSTNAME_MISMATCH: 'the certificate is not for this host name: use the name it was issued for',
};
const TRUST =
  'pass the certificate (its PEM file) as the `ca` option of createClient, or `--ca FILE` ' +
  '(or FORECOURT_CA) to `forecourt import`; NODE_EXTRA_CA_CERTS=FILE works for any Node.js program. ' +
  'The demo prints its certificate file as FORECOURT_CA';

/** What is wrong with the service's certificate, and what to do, when that is why the connection failed. */
export function certificateProblem(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (UNTRUSTED.has(code)) {
      return `the service's certificate is not trusted (${code}: ${e.message}). A self-signed or private certificate must be trusted explicitly: ${TRUST}. Not retried: it would fail the same way`;
    }
    if (OTHER_CERTIFICATE[code]) {
      return `the service's certificate was refused (${code}: ${e.message}): ${OTHER_CERTIFICATE[code]}. Not retried: it would fail the same way`;
    }
  }
  return undefined;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}

/** How bytes reach the service: the caller's fetch, undici with a CA or dispatcher, or the global fetch. */
function sender(options: ClientOptions): Send {
  if (options.fetch) return options.fetch;
  if (!options.dispatcher && !options.ca) return (url, init) => fetch(url, init);
  // undici only when needed, and its own fetch with its own Agent: Node's built-in fetch is a
  // different undici copy that need not accept this Agent.
  let ready: Promise<Send> | undefined;
  const load = async (): Promise<Send> => {
    const undici = await import('undici');
    const dispatcher =
      options.dispatcher ??
      // `ca` alone would replace the system's trust store; a partner behind a public certificate
      // that also passes `ca` must keep working.
      new undici.Agent({ connect: { ca: [...rootCertificates, String(options.ca)] } });
    return (url, init) =>
      undici.fetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  };
  return async (url, init) => {
    ready ??= load();
    return (await ready)(url, init);
  };
}
