/**
 * What fetching an image can end in (outbound/image-fetch.ts), and how an error of Node's is
 * named: by the layer it came from, in words a partner reads.
 */

/** What went wrong, in the words of the layer where it went wrong (docs/images.md). */
export type FetchFailureCode =
  | 'invalid_url'
  | 'refused_address'
  | 'dns'
  | 'connect'
  | 'tls'
  | 'timeout'
  | 'http_status'
  | 'too_many_redirects'
  | 'bad_response'
  | 'interrupted'
  | 'aborted';

/** Where a fetch was when its time ran out, or when it failed. */
export type FetchPhase = 'dns' | 'connect' | 'tls' | 'response' | 'body';

export interface FetchedImage {
  ok: true;
  /** The URL asked for, and the one that answered after redirects. */
  url: string;
  finalUrl: string;
  redirects: number;
  status: number;
  contentType: string | null;
  /** The first `headBytes` bytes of the body (all of it when smaller). */
  head: Buffer;
  /** Whether `head` is the whole body. */
  complete: boolean;
  /**
   * The body's size: counted to its end; when `overCap`, the Content-Length the server declared,
   * or, without one, the bytes read before stopping (maxBytes + 1: the size is at least that).
   */
  bytes: number;
  overCap: boolean;
  durationMs: number;
}

export interface FetchFailure {
  ok: false;
  failure: FetchFailureCode;
  /** What happened, for a partner: names the host, the address or the status. */
  message: string;
  url: string;
  /** The hop that failed (the URL itself unless a redirect led elsewhere). */
  finalUrl: string;
  redirects: number;
  /** The HTTP status, for `http_status` (and a redirect's status for `too_many_redirects`). */
  status: number | null;
  /** The Retry-After header of an `http_status` answer (429, 503): how long the host asks us to wait. */
  retryAfter: string | null;
  phase: FetchPhase | null;
  durationMs: number;
}

export type ImageFetchResult = FetchedImage | FetchFailure;

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);

/** Which layer an error came from: a lookup, a connection, TLS, or the HTTP exchange. */
export function describeError(
  error: NodeJS.ErrnoException,
  phase: FetchPhase | null,
  host: string,
): [FetchFailureCode, string] {
  const code = error.code ?? '';
  const withCode = code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  if (code === 'EFORBIDDENADDRESS') return ['refused_address', error.message];
  if (DNS_CODES.has(code) || phase === 'dns') return ['dns', `looking up ${host} failed: ${withCode}`];
  if (phase === 'tls' || isTlsCode(code)) return ['tls', `TLS with ${host} failed: ${withCode}`];
  if (code.startsWith('HPE_')) return ['bad_response', `the answer is not valid HTTP: ${withCode}`];
  if (phase === 'response' || phase === 'body') {
    return ['interrupted', `${host} closed the connection before answering: ${withCode}`];
  }
  return ['connect', `connecting to ${host} failed: ${withCode}`];
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('CERT_') ||
    code.includes('SELF_SIGNED') ||
    code.startsWith('UNABLE_TO_') ||
    code === 'HOSTNAME_MISMATCH' ||
    code === 'EPROTO'
  );
}

export function waitingFor(phase: FetchPhase | null): string {
  switch (phase) {
    case 'dns':
      return 'still looking up the name';
    case 'connect':
      return 'still connecting';
    case 'tls':
      return 'still in the TLS handshake';
    case 'response':
      return 'connected, no answer yet';
    case 'body':
      return 'the body was still arriving';
    case null:
      return 'not started';
  }
}
