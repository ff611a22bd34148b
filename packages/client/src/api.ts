import createFetchClient, { type Client } from 'openapi-fetch';
import { errorFromResponse } from './errors.js';
import type { paths } from './openapi.js';
import type { Transport } from './transport.js';
import type { CallOptions, ClientOptions } from './types.js';

export type Raw = Client<paths>;

/** What the resource modules share: the typed openapi-fetch client and the transport. */
export interface Api {
  raw: Raw;
  /** openapi-fetch request options for one call: our fetch with that call's retries and signal. */
  init(options?: CallOptions & { onWait?: ClientOptions['onWait'] }): {
    fetch: ReturnType<Transport['forCall']>;
  };
}

export function createApi(baseUrl: string, transport: Transport): Api {
  return {
    raw: createFetchClient<paths>({ baseUrl }),
    init: (options) => ({ fetch: transport.forCall(options) }),
  };
}

/** The API base: `https://host:port` gets `/api/external/v1`; a base already ending in it is kept. */
export function apiBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  const trimmed = url.pathname.replace(/\/+$/, '');
  url.pathname = trimmed.endsWith('/api/external/v1') ? trimmed : `${trimmed}/api/external/v1`;
  return url.toString().replace(/\/+$/, '');
}

/** The 2xx body, or a ForecourtError from the error answer. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; response: Response }> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw errorFromResponse(response, error);
  return { data, response };
}

/** `?dryRun=true` only when asked: the parameter is absent from ordinary writes. */
export const dryRun = (value: boolean | undefined) => (value ? { dryRun: true } : {});
