import { type Api, dryRun, unwrap } from './api.js';
import { iterateListings } from './iterate.js';
import type { ForecourtClient } from './types.js';
import { upsertMany } from './upsert-many.js';

export function listingMethods(api: Api): ForecourtClient['listings'] {
  const { raw } = api;
  const methods: ForecourtClient['listings'] = {
    async list(query = {}, options) {
      return (await unwrap(raw.GET('/listings', { params: { query }, ...api.init(options) }))).data;
    },

    async get(id, options) {
      const call = raw.GET('/listings/{listing}', {
        params: { path: { listing: id } },
        ...api.init(options),
      });
      return (await unwrap(call)).data.data;
    },

    async put(externalReference, listing, options = {}) {
      const call = raw.PUT('/listings/{listing}', {
        params: { path: { listing: externalReference }, query: dryRun(options.dryRun) },
        body: listing,
        ...api.init(options),
      });
      return (await unwrap(call)).data.data;
    },

    async setStatus(externalReference, status, options) {
      const call = raw.POST('/listings/{externalReference}/status', {
        params: { path: { externalReference } },
        body: { status },
        ...api.init(options),
      });
      return (await unwrap(call)).data.data;
    },

    async markSold(externalReference, options) {
      const call = raw.DELETE('/listings/{listing}', {
        params: { path: { listing: externalReference } },
        ...api.init(options),
      });
      return (await unwrap(call)).data.data;
    },

    async bulkUpsert(items, options = {}) {
      const call = raw.POST('/listings/bulk-upsert', {
        params: { query: dryRun(options.dryRun) },
        body: items,
        ...api.init(options),
      });
      return (await unwrap(call)).data.data;
    },

    iterate: (query, options) => iterateListings(methods.list, query, options),
    upsertMany: (items, options) => upsertMany(api, items, options),
  };
  return methods;
}
