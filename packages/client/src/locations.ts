import { type Api, unwrap } from './api.js';
import { ForecourtError } from './errors.js';
import type { ForecourtClient } from './types.js';

export function locationMethods(api: Api): ForecourtClient['locations'] {
  const { raw } = api;
  const methods: ForecourtClient['locations'] = {
    async list(query = {}, options) {
      return (await unwrap(raw.GET('/locations', { params: { query }, ...api.init(options) }))).data;
    },

    async get(id, options) {
      // No GET /locations/{id} in the API: every location in scope comes in one answer (without
      // parentId and with includeChildren, the default), so one list call finds it.
      const { data, response } = await unwrap(
        raw.GET('/locations', { params: { query: {} }, ...api.init(options) }),
      );
      const location = data.data.find((l) => l.id === id);
      if (location) return location;
      throw new ForecourtError(404, {
        code: 'NOT_FOUND',
        message: `No location ${id} in this API secret's access scope.`,
        requestId: response.headers.get('x-request-id') ?? undefined,
      });
    },

    async listings(id, query = {}, options) {
      const call = raw.GET('/locations/{id}/listings', {
        params: { path: { id }, query },
        ...api.init(options),
      });
      return (await unwrap(call)).data;
    },
  };
  return methods;
}

export function referenceMethods(api: Api): ForecourtClient['reference'] {
  return {
    async enums(options) {
      return (await unwrap(api.raw.GET('/reference/enums', api.init(options)))).data.data;
    },
  };
}
