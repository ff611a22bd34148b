import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { hostOf } from './addresses.js';
import { guardedAgents, type OutboundRules, refusedLiteral } from './guard.js';
import {
  describeError,
  type FetchedImage,
  type FetchFailure,
  type FetchFailureCode,
  type FetchPhase,
  type ImageFetchResult,
  waitingFor,
} from './image-fetch-result.js';

export type { FetchedImage, FetchFailure, FetchFailureCode, FetchPhase, ImageFetchResult };

/**
 * Fetches one image URL a partner gave, under the outbound rules of webhooks (outbound/guard.ts):
 * public addresses only, checked after DNS at every connection and pinned for it, every redirect
 * hop checked again. What comes back is the head of the body (what classification reads) and its
 * size, never a whole large body: memory per fetch is bounded by `headBytes`.
 */
export interface ImageFetchOptions {
  /** Lift the address rules (tests and local development only). */
  allowPrivate: boolean;
  /** Admit loopback addresses (the demo serves its own sample images). */
  allowLoopback?: boolean;
  /** From the start of a hop until the connection is up: DNS, TCP and TLS together. */
  connectTimeoutMs?: number;
  /** The whole fetch, every hop and the body included: a server that trickles ends here. */
  timeoutMs?: number;
  /** The byte cap: a body larger than this is not read further (`overCap`). */
  maxBytes: number;
  /** How much of the body's beginning is kept for classification. */
  headBytes?: number;
  /** Redirects followed; one more is `too_many_redirects`. */
  maxRedirects?: number;
  /** Connections kept per host (host-limits decide how many fetches run; this only pools). */
  maxSocketsPerHost?: number;
}

/**
 * 5 s to connect: a host that needs longer for DNS, TCP and TLS together is down or far away,
 * and the check comes back later anyway. 20 s in all: a 20 MB image at 10 Mbit/s takes 16 s.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_TIMEOUT_MS = 20_000;
/** The head kept by default: JPEG's frame header follows EXIF, ICC and XMP segments (each up to 64 KiB). */
export const DEFAULT_HEAD_BYTES = 256 * 1024;
export const DEFAULT_MAX_REDIRECTS = 3;

export interface ImageFetcher {
  /** Never rejects: every outcome is a result. `signal` abandons the fetch (`aborted`). */
  fetch(url: string, signal?: AbortSignal): Promise<ImageFetchResult>;
  /** Closes the kept-alive connections. */
  close(): void;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE']);

export function imageFetcher(options: ImageFetchOptions): ImageFetcher {
  const rules: OutboundRules = {
    allowPrivate: options.allowPrivate,
    allowLoopback: options.allowLoopback,
    rule: 'images are fetched from public addresses only',
  };
  const agents = guardedAgents(rules, { maxSockets: options.maxSocketsPerHost ?? 8, idleMs: 15_000 });
  const headBytes = options.headBytes ?? DEFAULT_HEAD_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;

  const fetch = (target: string, signal?: AbortSignal): Promise<ImageFetchResult> => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let redirects = 0;
    let current = target;
    let phase: FetchPhase | null = null;
    let request: http.ClientRequest | undefined;
    let settle: (result: ImageFetchResult) => void = () => {};
    const done = new Promise<ImageFetchResult>((resolve) => {
      settle = resolve;
    });
    let settled = false;
    const finish = (result: Omit<FetchedImage, 'durationMs'> | Omit<FetchFailure, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connectTimer);
      signal?.removeEventListener('abort', onAbort);
      // A finished body has handed its socket back to the agent for the next fetch already.
      if (!result.ok) request?.destroy();
      settle({ ...result, durationMs: elapsed() } as ImageFetchResult);
    };
    const fail = (
      failure: FetchFailureCode,
      message: string,
      status: number | null = null,
      retryAfter: string | null = null,
    ) =>
      finish({
        ok: false,
        failure,
        message,
        url: target,
        finalUrl: current,
        redirects,
        status,
        retryAfter,
        phase,
      });

    const total = setTimeout(() => {
      fail('timeout', `no complete answer within ${timeoutMs} ms (${waitingFor(phase)})`);
    }, timeoutMs);
    let connectTimer: NodeJS.Timeout | undefined;
    const onAbort = () => fail('aborted', 'the check was abandoned');
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });

    const hop = (raw: string, retry = false) => {
      if (settled) return;
      current = raw;
      phase = null;
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return fail('invalid_url', `${shown(raw)} is not an absolute URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        const scheme = url.protocol.slice(0, -1);
        const via = redirects > 0 ? 'a redirect leads to' : 'the URL uses';
        return fail('invalid_url', `${via} ${scheme}: only http and https are fetched`);
      }
      const refused = refusedLiteral(hostOf(url), rules);
      if (refused) return fail('refused_address', refused);

      phase = isIP(hostOf(url)) === 0 ? 'dns' : 'connect';
      clearTimeout(connectTimer);
      connectTimer = setTimeout(() => {
        fail('timeout', `no connection to ${url.host} within ${connectTimeoutMs} ms (${waitingFor(phase)})`);
      }, connectTimeoutMs);
      const connected = () => {
        clearTimeout(connectTimer);
        phase = 'response';
      };
      const protocol = url.protocol === 'http:' ? http : https;
      const req = protocol.request(url, {
        method: 'GET',
        agent: agents[url.protocol as 'http:' | 'https:'],
        headers: {
          'user-agent': 'Forecourt-ImageCheck/1',
          accept: 'image/avif,image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8,*/*;q=0.5',
          // The bytes as stored: a compressed body would hide the magic numbers.
          'accept-encoding': 'identity',
        },
      });
      request = req;
      let reused = false;
      req.on('socket', (socket: Socket) => {
        // A kept-alive socket is connected already.
        if (!socket.connecting) {
          reused = true;
          return connected();
        }
        socket.once('lookup', () => {
          if (phase === 'dns') phase = 'connect';
        });
        socket.once('connect', () => {
          if (url.protocol === 'https:') phase = 'tls';
          else connected();
        });
        socket.once('secureConnect', connected);
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the server closed as the request went out (the race every
        // keep-alive client meets): once more on a fresh connection, not a verdict on the image.
        if (reused && !retry && phase === 'response' && STALE_SOCKET.has(error.code ?? '')) {
          return hop(raw, true);
        }
        const [failure, message] = describeError(error, phase, url.host);
        fail(failure, message);
      });
      req.on('response', (response) => {
        connected();
        phase = 'body';
        const status = response.statusCode ?? 0;
        if (REDIRECTS.has(status) && response.headers.location !== undefined) {
          response.destroy();
          if (redirects >= maxRedirects) {
            return fail(
              'too_many_redirects',
              `more than ${maxRedirects} redirects (the last, ${status}, to ${shown(response.headers.location)})`,
              status,
            );
          }
          let next: string;
          try {
            next = new URL(response.headers.location, url).href;
          } catch {
            return fail('invalid_url', `a redirect leads to ${shown(response.headers.location)}, not a URL`);
          }
          redirects += 1;
          return hop(next);
        }
        if (status < 200 || status > 299) {
          response.destroy();
          const retryAfter = response.headers['retry-after'] ?? null;
          return fail(
            'http_status',
            `the server answered ${status}${reason(response.statusMessage)}`,
            status,
            retryAfter,
          );
        }
        readBody(response, url.href, status);
      });
      req.end();
    };

    const readBody = (response: http.IncomingMessage, finalUrl: string, status: number) => {
      const declared = contentLength(response.headers['content-length']);
      const chunks: Buffer[] = [];
      let kept = 0;
      let read = 0;
      const result = (complete: boolean, bytes: number, overCap: boolean) =>
        finish({
          ok: true,
          url: target,
          finalUrl,
          redirects,
          status,
          contentType: response.headers['content-type'] ?? null,
          head: Buffer.concat(chunks),
          complete,
          bytes,
          overCap,
        });
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (kept < headBytes) {
          const part = chunk.subarray(0, headBytes - kept);
          chunks.push(part);
          kept += part.length;
        }
        // A declared size over the cap needs only the head (to say what it is): the size is known.
        // The result first: destroying the response emits 'aborted' at once, which is no failure here.
        if (declared !== null && declared > options.maxBytes && kept >= headBytes) {
          result(false, declared, true);
          return response.destroy();
        }
        // Read at most maxBytes + 1 bytes: one byte past the cap proves it is passed.
        if (read > options.maxBytes) {
          result(false, declared ?? options.maxBytes + 1, true);
          return response.destroy();
        }
      });
      response.on('end', () => result(read <= headBytes, read, false));
      response.on('aborted', () =>
        fail('interrupted', `the connection closed after ${read} bytes of the body`),
      );
      response.on('error', (error: NodeJS.ErrnoException) => {
        if (!settled) fail('interrupted', `the body was cut off after ${read} bytes (${error.message})`);
      });
    };

    hop(target);
    return done;
  };

  return {
    fetch,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function contentLength(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) return null;
  return Number(raw);
}

const reason = (message: string | undefined) => (message ? ` (${message.slice(0, 100)})` : '');

/** A URL as shown in a message: cut at 200 characters (a Location header can be anything). */
const shown = (raw: string) => JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
