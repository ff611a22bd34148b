import { request } from 'undici';
import type { Proc } from './processes.js';

export const API = '/api/external/v1';
export const ADMIN = '/api/admin/v1';

/**
 * The service's HTTP API as a bench script drives it (over the service's own dispatcher, so its
 * self-signed certificate is accepted): JSON both ways, a partner's secret or the admin token as
 * the bearer.
 */
export function serviceApi(service: Pick<Proc, 'url' | 'dispatcher'>, adminToken: string) {
  /** Whatever the service answers, refusals included. */
  async function call(method: string, urlPath: string, secret: string, body?: unknown) {
    const res = await request(`${service.url}${urlPath}`, {
      method: method as 'GET',
      dispatcher: service.dispatcher,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, text };
  }
  /** The answer's `data`; any status from 300 up is an error. */
  async function ok(method: string, urlPath: string, secret: string, body?: unknown) {
    const res = await call(method, urlPath, secret, body);
    if (res.status >= 300) throw new Error(`${method} ${urlPath}: ${res.status} ${res.text.slice(0, 500)}`);
    return res.body?.data;
  }
  /** A partner that sees every dealer, created through the admin API as an operator would. */
  function createPartner(partner: {
    name: string;
    scopes: string[];
    rateLimitPerMinute?: number;
  }): Promise<{ id: string; secret: string }> {
    return ok('POST', `${ADMIN}/partners`, adminToken, { ...partner, access: { scope: 'global' } });
  }
  return { call, ok, createPartner };
}
