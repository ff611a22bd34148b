import { apiBaseUrl, createApi } from './api.js';
import { listingMethods } from './listings.js';
import { locationMethods, referenceMethods } from './locations.js';
import { modeOf } from './mode.js';
import { requestMethods } from './requests.js';
import { createTransport } from './transport.js';
import type { ClientOptions, ForecourtClient } from './types.js';
import { webhookMethods } from './webhooks.js';

/** A client for one API secret. Cheap to create; share one per secret (it paces the rate limit). */
export function createClient(options: ClientOptions): ForecourtClient {
  const base = apiBaseUrl(options.baseUrl);
  const api = createApi(base, createTransport(options, base));
  return {
    mode: modeOf(options.secret),
    listings: listingMethods(api),
    locations: locationMethods(api),
    reference: referenceMethods(api),
    webhooks: webhookMethods(api),
    requests: requestMethods(api),
  };
}
