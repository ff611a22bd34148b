// @ts-check
// The one way the console talks to the service: the admin API of this same origin, with the
// operator's token from this tab. Errors come back as ApiError, worded by ui.js's errorBox.

const API = '/api/admin/v1';
export const TOKEN_KEY = 'forecourt.operatorToken';

/** @typedef {{path: string, message: string, code: string}} Issue */

export class ApiError extends Error {
  /**
   * @param {number} status 0: the service did not answer at all
   * @param {any} body the error envelope, when there was one
   */
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    /** @type {string | undefined} */
    this.code = body?.error?.code;
    /** @type {Issue[]} */
    this.issues = body?.error?.issues ?? [];
    /** @type {string | undefined} */
    this.requestId = body?.error?.requestId;
    /** @type {unknown} What the request sent: a refusal says how long a field sent was. */
    this.sent = undefined;
  }
}

/** @type {() => void} */
let onRefused = () => {};
/**
 * What to do when the service refuses the tab's token (router.js signs out): set by the router, so
 * this module needs nothing of the pages.
 * @param {() => void} handler
 */
export function whenRefused(handler) {
  onRefused = handler;
}

/**
 * Calls the admin API. A 401 means the tab's token no longer opens it (revoked, or a new
 * ADMIN_TOKEN after a restart): the console signs out and says so, whatever page asked, unless
 * the call is the sign-in form's own check of a token typed in (`signingIn`).
 * @template T
 * @param {'GET' | 'POST' | 'PATCH' | 'DELETE'} method
 * @param {string} path under /api/admin/v1
 * @param {unknown} [body]
 * @param {{signingIn?: boolean}} [options]
 * @returns {Promise<T>}
 */
export async function api(method, path, body, { signingIn = false } = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  let res;
  try {
    res = await fetch(`${API}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, null);
  }
  const json = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401 && !signingIn) onRefused();
  if (!res.ok) {
    const error = new ApiError(res.status, json);
    error.sent = body;
    throw error;
  }
  return json;
}

/**
 * A query string of the filters that are set (empty ones are left out, so the API's defaults apply).
 * @param {Record<string, string | number | null | undefined>} params
 */
export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '') q.set(key, String(value));
  const s = q.toString();
  return s ? `?${s}` : '';
}
