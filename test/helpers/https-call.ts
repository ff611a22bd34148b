import { type Dispatcher, request } from 'undici';
import type { Reply } from './app.js';
import { assertContract } from './contract.js';

export interface HttpsCallOptions {
  headers?: Record<string, string>;
  /** A JSON value, sent with Content-Type: application/json unless a content type is given. */
  body?: unknown;
  /** A body sent as it is (with whatever content type the headers name). */
  raw?: string;
  signal?: AbortSignal;
}

/**
 * One request to a service under test, in-process or a child process alike: the answer parsed when
 * it is JSON, and every partner-API answer checked against the OpenAPI document.
 */
export async function httpsCall(
  base: string,
  dispatcher: Dispatcher,
  method: string,
  urlPath: string,
  options: HttpsCallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(`${base}${urlPath}`, {
    method: method as Dispatcher.HttpMethod,
    headers,
    body,
    dispatcher,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const reply = { status: res.statusCode, headers: res.headers, body: parsed, text };
  assertContract(method, urlPath, reply);
  return reply;
}
