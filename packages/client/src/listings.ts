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

    async getWithEtag(id, options) {
      const call = raw.GET('/listings/{listing}', {
        params: { path: { listing: id } },
        ...api.init(options),
      });
      const { data, response } = await unwrap(call);
      return { listing: data.data, etag: etagOf(response) };
    },

    async put(externalReference, listing, options = {}) {
      const call = raw.PUT('/listings/{listing}', {
        params: {
          path: { listing: externalReference },
          query: dryRun(options.dryRun),
          header: ifMatch(options.ifMatch),
        },
        body: listing,
        ...api.init(options),
      });
      // The document types both forms in one; `dryRun` in the options says which this is.
      return versioned(await unwrap(call)) as never;
    },

    async patch(externalReference, patch, options = {}) {
      const call = raw.PATCH('/listings/{listing}', {
        params: {
          path: { listing: externalReference },
          query: dryRun(options.dryRun),
          header: ifMatch(options.ifMatch),
        },
        body: patch,
        headers: { 'content-type': 'application/merge-patch+json' },
        ...api.init(options),
      });
      return versioned(await unwrap(call)) as never;
    },

    async setStatus(externalReference, status, options = {}) {
      const call = raw.POST('/listings/{externalReference}/status', {
        params: {
          path: { externalReference },
          query: dryRun(options.dryRun),
          header: ifMatch(options.ifMatch),
        },
        body: { status },
        ...api.init(options),
      });
      return versioned(await unwrap(call)) as never;
    },

    async markSold(externalReference, options = {}) {
      const call = raw.DELETE('/listings/{listing}', {
        params: {
          path: { listing: externalReference },
          query: dryRun(options.dryRun),
          header: ifMatch(options.ifMatch),
        },
        ...api.init(options),
      });
      return versioned(await unwrap(call)) as never;
    },

    remove: (externalReference, options) => methods.markSold(externalReference, options),

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

/** The If-Match header when asked for; absent otherwise. */
const ifMatch = (value: string | undefined) => (value === undefined ? {} : { 'If-Match': value });

/** The ETag of an answer (every listing answer carries one). */
function etagOf(response: Response): string {
  return response.headers.get('etag') ?? '';
}

/** A write's `data` with the listing's new ETag beside it. */
function versioned<T>({ data, response }: { data: { data: T }; response: Response }): T & { etag: string } {
  return { ...data.data, etag: etagOf(response) };
}
