import { type Api, unwrap } from './api.js';
import { errorFromResponse } from './errors.js';
import type { ForecourtClient } from './types.js';

/** /webhooks: the calling partner's endpoints (docs/webhooks.md). */
export function webhookMethods(api: Api): ForecourtClient['webhooks'] {
  const { raw } = api;
  const path = (id: string) => ({ params: { path: { id } } });
  return {
    async create(body, options) {
      return (await unwrap(raw.POST('/webhooks', { body, ...api.init(options) }))).data.data;
    },
    async list(options) {
      return (await unwrap(raw.GET('/webhooks', api.init(options)))).data.data;
    },
    async get(id, options) {
      return (await unwrap(raw.GET('/webhooks/{id}', { ...path(id), ...api.init(options) }))).data.data;
    },
    async update(id, body, options) {
      return (await unwrap(raw.PATCH('/webhooks/{id}', { ...path(id), body, ...api.init(options) }))).data
        .data;
    },
    async remove(id, options) {
      // 204 has no body, so unwrap (which wants one) does not fit.
      const { error, response } = await raw.DELETE('/webhooks/{id}', { ...path(id), ...api.init(options) });
      if (!response.ok) throw errorFromResponse(response, error);
    },
    async rotateSecret(id, options) {
      const call = raw.POST('/webhooks/{id}/rotate-secret', { ...path(id), ...api.init(options) });
      return (await unwrap(call)).data.data;
    },
    async test(id, query = {}, options) {
      const call = raw.POST('/webhooks/{id}/test', { params: { path: { id }, query }, ...api.init(options) });
      return (await unwrap(call)).data.data;
    },
    async resume(id, resume = {}, options) {
      const call = raw.POST('/webhooks/{id}/resume', { ...path(id), body: resume, ...api.init(options) });
      return (await unwrap(call)).data.data;
    },
    async deliveries(id, query = {}, options) {
      const call = raw.GET('/webhooks/{id}/deliveries', {
        params: { path: { id }, query },
        ...api.init(options),
      });
      return (await unwrap(call)).data;
    },
    async events(query = {}, options) {
      return (await unwrap(raw.GET('/events', { params: { query }, ...api.init(options) }))).data;
    },
  };
}
