import { type Api, unwrap } from './api.js';
import type { ForecourtClient } from './types.js';

/** /requests: the calling partner's failed requests ("why did my request fail?"). */
export function requestMethods(api: Api): ForecourtClient['requests'] {
  const { raw } = api;
  return {
    async list(query = {}, options) {
      return (await unwrap(raw.GET('/requests', { params: { query }, ...api.init(options) }))).data;
    },
    async get(requestId, options) {
      const call = raw.GET('/requests/{requestId}', {
        params: { path: { requestId } },
        ...api.init(options),
      });
      return (await unwrap(call)).data.data;
    },
  };
}
