import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ENUMS } from '../../../domain/enums.js';
import { problem } from '../../../domain/errors.js';
import { referenceSchema } from '../../../domain/listing-input.js';
import { itemErrorSchema, itemResultSchema, writeResultSchema } from '../../../domain/listing-items.js';
import type { ListingWrites, RawItem } from '../../../domain/listing-writes/index.js';
import { unknownKeyIssues } from '../../../domain/unknown-keys.js';
import type { Metrics } from '../../../http/metrics.js';
import { invalidInput } from '../../../http/validation.js';
import { booleanParam } from '../../schemas/query.js';
import { partnerErrors } from '../../schemas/responses.js';
import {
  bulkBodyDoc,
  bulkExamples,
  listingWriteDoc,
  putExamples,
  statusBodyDoc,
  statusExamples,
} from './listing-write-docs.js';

export const MAX_BULK_ITEMS = 100;

const referenceParams = z.object({ externalReference: referenceSchema });
const dryRunQuery = z.object({
  dryRun: booleanParam
    .optional()
    .describe('Validate and resolve everything, write nothing; the answer is the same.'),
});

const statusResult = z.object({ listingId: z.string(), externalReference: z.string(), status: z.string() });
// Writes name the partner only: a group's full access list (hundreds of ids) on every write is
// noise (decisions.md). Reads carry the access block.
const writeMeta = z.object({
  partner: z.object({ id: z.string(), name: z.string() }),
  dryRun: z.boolean().optional(),
});
const writerMeta = (partner: { id: string; name: string }) => ({ id: partner.id, name: partner.name });
const writeErrors = {
  ...partnerErrors,
  405: partnerErrors[400],
  413: partnerErrors[400],
  415: partnerErrors[400],
  422: partnerErrors[400],
};

function requireObject(body: unknown): Record<string, unknown> {
  if (body === undefined) throw problem('INVALID_BODY', 'A JSON object body is required.');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw problem('INVALID_BODY', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

export function listingWriteRoutes(
  writes: ListingWrites,
  metrics: Pick<Metrics, 'bulkItems'>,
): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.put(
      '/listings/:externalReference',
      {
        config: { scope: 'write:listings', documentedBody: listingWriteDoc, bodyExamples: putExamples },
        schema: {
          summary: 'Create or replace a listing by your reference',
          description:
            'Upsert: 201 when the reference was new, 200 when it replaced your listing (outcome `unchanged` when nothing differed; its updatedAt then stays). Safe to retry.',
          tags: ['Listings (write)'],
          params: referenceParams,
          querystring: dryRunQuery,
          response: {
            200: z.object({ data: writeResultSchema, meta: writeMeta }),
            201: z.object({ data: writeResultSchema, meta: writeMeta }),
            ...writeErrors,
          },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const ref = request.params.externalReference;
        const body = requireObject(request.body);
        const dryRun = request.query.dryRun ?? false;
        const { results, errors } = await writes.upsert(partner, [{ index: 0, reference: ref, body }], {
          dryRun,
        });
        const failed = errors[0];
        if (failed) throw problem(failed.code, failed.message, failed.issues);
        const { index: _index, supersededBy: _s, ...result } = results[0]!;
        reply.status(result.created ? 201 : 200);
        return { data: result, meta: { partner: writerMeta(partner), ...(dryRun ? { dryRun } : {}) } };
      },
    );

    app.post(
      '/listings/bulk-upsert',
      {
        config: { scope: 'write:listings', documentedBody: bulkBodyDoc, bodyExamples: bulkExamples },
        schema: {
          description:
            'Always 200 when the request itself is well-formed: each item is in `results` or in `errors` (with its index, status and issues). A repeated reference: the last occurrence that passes validation wins, earlier ones that pass are `superseded`. Counts as one request against your rate limit. Safe to retry.',
          summary: `Create or replace up to ${MAX_BULK_ITEMS} listings; each item succeeds or fails on its own`,
          tags: ['Listings (write)'],
          querystring: dryRunQuery,
          response: {
            200: z.object({
              data: z.object({
                successCount: z.number().int(),
                errorCount: z.number().int(),
                results: z.array(itemResultSchema),
                errors: z.array(itemErrorSchema),
              }),
              meta: writeMeta,
            }),
            ...writeErrors,
          },
        },
      },
      async (request) => {
        const partner = request.partner!;
        const items = bulkItems(request.body);
        const dryRun = request.query.dryRun ?? false;
        const raw: RawItem[] = items.map((body, index) => {
          // The canonical name wins whenever it is sent, even as null: a null is not a reference,
          // and the alias must not quietly stand in for it. (An item that is not an object has none.)
          const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
          const reference =
            'externalReference' in record ? record.externalReference : record.external_reference;
          return { index, body, reference };
        });
        const { results, errors } = await writes.upsert(partner, raw, { dryRun });
        if (!dryRun) {
          countBulkOutcomes(metrics, results, errors.length);
          request.bulkOutcome = {
            written: results.filter((r) => r.outcome === 'created' || r.outcome === 'updated').length,
            failed: errors.length,
          };
        }
        return {
          data: { successCount: results.length, errorCount: errors.length, results, errors },
          meta: { partner: writerMeta(partner), ...(dryRun ? { dryRun } : {}) },
        };
      },
    );

    app.post(
      '/listings/:externalReference/status',
      {
        config: { scope: 'write:listings', documentedBody: statusBodyDoc, bodyExamples: statusExamples },
        schema: {
          summary: 'Change only the status of a listing',
          tags: ['Listings (write)'],
          params: referenceParams,
          response: { 200: z.object({ data: statusResult, meta: writeMeta }), ...writeErrors },
        },
      },
      async (request) => {
        const partner = request.partner!;
        const ref = request.params.externalReference;
        const body = requireObject(request.body);
        const status = typeof body.status === 'string' ? body.status.trim().toLowerCase() : undefined;
        const issues = unknownKeyIssues(body, ['status'], 'field');
        if (!status || !(ENUMS.status.values as readonly string[]).includes(status)) {
          const message = `must be one of ${ENUMS.status.values.join(', ')}`;
          const missing = body.status === undefined;
          issues.unshift({
            path: 'status',
            message: `${missing ? 'is required and ' : ''}${message}`,
            code: missing ? 'required' : 'invalid_value',
          });
        }
        if (issues.length) throw invalidInput('body', issues);
        const data = await writes.changeStatus(partner, ref, status as (typeof ENUMS.status.values)[number]);
        return { data, meta: { partner: writerMeta(partner) } };
      },
    );

    app.delete(
      '/listings/:externalReference',
      {
        config: { scope: 'write:listings' },
        schema: {
          summary: 'Mark a listing as sold (soft delete; idempotent)',
          tags: ['Listings (write)'],
          params: referenceParams,
          response: { 200: z.object({ data: statusResult, meta: writeMeta }), ...writeErrors },
        },
      },
      async (request) => {
        const partner = request.partner!;
        const data = await writes.changeStatus(partner, request.params.externalReference, 'sold');
        return { data, meta: { partner: writerMeta(partner) } };
      },
    );
  };
}

function countBulkOutcomes(
  { bulkItems }: Pick<Metrics, 'bulkItems'>,
  results: { outcome: string }[],
  failed: number,
): void {
  for (const result of results) bulkItems.inc({ outcome: result.outcome });
  if (failed) bulkItems.inc({ outcome: 'failed' }, failed);
}

/** The bulk body: a JSON array of listings, or {items: [...]}. */
function bulkItems(body: unknown): unknown[] {
  if (body === undefined)
    throw problem('EMPTY_PAYLOAD', 'No items: send a JSON array of listings or {"items": [...]}.');
  const items = Array.isArray(body)
    ? body
    : body !== null && typeof body === 'object'
      ? (body as { items?: unknown }).items
      : undefined;
  if (items === undefined && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    throw problem('EMPTY_PAYLOAD', 'No items: the object has no "items" array.');
  }
  if (!Array.isArray(items)) {
    throw problem('INVALID_BODY', 'The body must be a JSON array of listings or an object {"items": [...]}.');
  }
  // {"items": [...], "dryRun": true} must not quietly write for real: the wrapper has one field.
  if (!Array.isArray(body)) {
    const unknown = unknownKeyIssues(body as Record<string, unknown>, ['items'], 'field');
    if (unknown.length) throw invalidInput('body', unknown);
  }
  if (items.length === 0) throw problem('EMPTY_PAYLOAD', 'No items: the list of listings is empty.');
  if (items.length > MAX_BULK_ITEMS) {
    throw problem(
      'TOO_MANY_ITEMS',
      `${items.length} items sent; at most ${MAX_BULK_ITEMS} per request. Split the feed into batches of ${MAX_BULK_ITEMS}.`,
    );
  }
  return items;
}
