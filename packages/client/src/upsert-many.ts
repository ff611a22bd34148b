import { type Api, dryRun as dryRunQuery } from './api.js';
import { errorFromResponse } from './errors.js';
import type {
  BatchReport,
  BulkResult,
  ItemResult,
  ListingInput,
  UpsertManyOptions,
  UpsertOutcome,
  UpsertReport,
} from './types.js';

/** The service's limit per bulk request (more: 400 TOO_MANY_ITEMS). */
export const MAX_BATCH = 100;

/**
 * Sends any number of listings as bulk upserts of up to 100, one request after another (as
 * docs/api.md#many-at-once-post-listingsbulk-upsert advises for a large feed; the rate limit counts a
 * bulk request as one: docs/contract.md#rate-limits). Retries, Retry-After
 * and RateLimit-* pacing happen in the transport. Retrying a batch is safe: a bulk upsert replaces
 * each listing by its reference, so a batch applied twice (its first answer was lost to a network
 * failure) ends in the same state, the second answer reporting `unchanged`.
 *
 * Item failures (validation, dealer out of scope, bad reference) are part of the report. A failure
 * of the request itself (401, 403 INSUFFICIENT_SCOPE, retries exhausted, aborted) rejects: every
 * later batch would fail the same way, and `onBatch` has already recorded what was done.
 */
export async function upsertMany(
  api: Api,
  items: readonly ListingInput[],
  options: UpsertManyOptions = {},
): Promise<UpsertReport> {
  const batchSize = options.batchSize ?? MAX_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
    throw new RangeError(`batchSize must be an integer from 1 to ${MAX_BATCH}, got ${batchSize}`);
  }
  const dryRun = options.dryRun ?? false;
  const callOptions = {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    ...(options.onWait ? { onWait: options.onWait } : {}),
  };

  /** One request for `indices`; a batch too large in bytes (413) is halved until it fits. */
  async function send(indices: number[], requestIds: string[]): Promise<ItemResult[]> {
    const { data, error, response } = await api.raw.POST('/listings/bulk-upsert', {
      params: { query: dryRunQuery(dryRun) },
      body: indices.map((i) => items[i]!),
      ...api.init(callOptions),
    });
    const requestId = response.headers.get('x-request-id');
    if (requestId) requestIds.push(requestId);
    if (response.ok && data) return mapResults(data.data, indices, items);
    if (response.status === 413 && indices.length > 1) {
      const half = Math.ceil(indices.length / 2);
      return [
        ...(await send(indices.slice(0, half), requestIds)),
        ...(await send(indices.slice(half), requestIds)),
      ];
    }
    const failure = errorFromResponse(response, error);
    if (response.status === 413) {
      // One listing alone is over the body limit: that item fails, the run goes on.
      const index = indices[0]!;
      const { code, message, status } = failure;
      return [{ ok: false, index, ...reference(items[index]), code, message, status }];
    }
    throw failure;
  }

  const results: ItemResult[] = new Array(items.length);
  const batches = Math.ceil(items.length / batchSize);
  for (let batch = 0; batch < batches; batch++) {
    options.signal?.throwIfAborted();
    const start = batch * batchSize;
    const indices = Array.from({ length: Math.min(batchSize, items.length - start) }, (_, k) => start + k);
    const requestIds: string[] = [];
    const batchResults = await send(indices, requestIds);
    for (const result of batchResults) results[result.index] = result;
    const report: BatchReport = {
      batch,
      batches,
      indices,
      results: indices.map((i) => results[i]!),
      requestIds,
      dryRun,
    };
    // Awaited: a caller persisting resume state must have it on disk before the next batch goes.
    await options.onBatch?.(report);
  }
  return summarize(results, batches, dryRun);
}

/** The service's batch-local indices → indices in the caller's input. */
function mapResults(data: BulkResult, indices: number[], items: readonly ListingInput[]): ItemResult[] {
  const byLocal = new Map<number, ItemResult>();
  for (const r of data.results) {
    byLocal.set(r.index, {
      ok: true,
      index: indices[r.index]!,
      externalReference: r.externalReference,
      outcome: r.outcome,
      listingId: r.listingId,
      status: r.status,
      ...(r.supersededBy === undefined ? {} : { supersededBy: indices[r.supersededBy]! }),
    });
  }
  for (const e of data.errors) {
    byLocal.set(e.index, {
      ok: false,
      index: indices[e.index]!,
      ...(e.externalReference === undefined
        ? reference(items[indices[e.index]!])
        : { externalReference: e.externalReference }),
      code: e.code,
      message: e.message,
      status: e.status,
      ...(e.issues ? { issues: e.issues } : {}),
    });
  }
  return indices.map(
    (index, local) =>
      byLocal.get(local) ?? {
        // Not expected from the service; the report still covers every item rather than a hole.
        ok: false,
        index,
        ...reference(items[index]),
        code: 'NO_RESULT',
        message: 'The bulk answer had no result for this item.',
        status: 0,
      },
  );
}

function reference(item: ListingInput | undefined): { externalReference?: string } {
  const value = item?.externalReference ?? item?.external_reference;
  return typeof value === 'string' ? { externalReference: value } : {};
}

/**
 * The count an outcome goes to in a report: a dry run's would_create, would_update and
 * would_be_unchanged count as created, updated and unchanged (the report's `dryRun` says they
 * were not written).
 */
export function countedAs(outcome: UpsertOutcome): 'created' | 'updated' | 'unchanged' | 'superseded' {
  switch (outcome) {
    case 'would_create':
      return 'created';
    case 'would_update':
      return 'updated';
    case 'would_be_unchanged':
      return 'unchanged';
    default:
      return outcome;
  }
}

function summarize(items: ItemResult[], batches: number, dryRun: boolean): UpsertReport {
  const report: UpsertReport = {
    items,
    created: 0,
    updated: 0,
    unchanged: 0,
    superseded: 0,
    failed: 0,
    batches,
    dryRun,
  };
  for (const item of items) {
    if (item.ok) report[countedAs(item.outcome)]++;
    else report.failed++;
  }
  return report;
}
