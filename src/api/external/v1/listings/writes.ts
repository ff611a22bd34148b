import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ENUMS } from '../../../../domain/enums.js';
import { problem } from '../../../../domain/errors.js';
import { malformedIfMatch } from '../../../../domain/etag.js';
import { referenceSchema } from '../../../../domain/listings/input.js';
import {
  itemErrorSchema,
  itemResultSchema,
  statusResultSchema,
  writeResultSchema,
} from '../../../../domain/listings/items.js';
import type { ListingWrites, RawItem } from '../../../../domain/listings/writes/index.js';
import { messages } from '../../../../domain/messages.js';
import { unknownKeyIssues } from '../../../../domain/unknown-keys.js';
import type { Metrics } from '../../../../http/metrics.js';
import { invalidInput } from '../../../../http/validation.js';
import { booleanParam } from '../../../schemas/query.js';
import { partnerErrors } from '../../../schemas/responses.js';
import {
  bulkBodyDoc,
  bulkExamples,
  listingPatchDoc,
  listingWriteDoc,
  patchExamples,
  putExamples,
  statusBodyDoc,
  statusExamples,
} from './write-docs.js';

const MAX_BULK_ITEMS = 100;

const referenceParams = z.object({ externalReference: referenceSchema });
const dryRunQuery = z.object({
  dryRun: booleanParam
    .optional()
    .describe(
      'Validate and resolve everything, write nothing. The answer says what the write would do: always 200, `dryRun: true` in data and meta, outcome would_create, would_update or would_be_unchanged, listingId null for a listing that does not exist yet, no Location.',
    ),
});

const statusResult = statusResultSchema;
// Writes name the partner only: a group's full access list (hundreds of ids) on every write is
// noise (docs/contract.md#write-answers). Reads carry the access block.
const writeMeta = z.object({
  partner: z.object({ id: z.string(), name: z.string() }),
  dryRun: z.boolean().optional(),
});
const writerMeta = (partner: { id: string; name: string }) => ({ id: partner.id, name: partner.name });
/** A write answer's meta: the partner, and `dryRun: true` on a dry run's. */
const metaOf = (partner: { id: string; name: string }, dryRun: boolean) => ({
  partner: writerMeta(partner),
  ...(dryRun ? { dryRun } : {}),
});
/** Where a listing created by a PUT is read (its Location). */
const LISTING_PATH = '/api/external/v1/listings/';
const writeErrors = {
  ...partnerErrors,
  405: partnerErrors[400],
  413: partnerErrors[400],
  415: partnerErrors[400],
  422: partnerErrors[400],
};
/** Writes to one listing: they answer with its ETag and honour If-Match (412 when it fails). */
const versionedErrors = { ...writeErrors, 412: partnerErrors[400] };

/**
 * If-Match as sent: undefined when absent. A malformed one (not `*` nor a list of quoted entity
 * tags: an ETag without its quotes) is a 400 INVALID_HEADER here, before anything is read; which
 * version it names is checked in the domain.
 */
function ifMatchOf(request: FastifyRequest): string | undefined {
  const sent = request.headers['if-match'];
  const value = Array.isArray(sent) ? sent.join(', ') : sent;
  const malformed = malformedIfMatch(value);
  if (malformed) throw malformed;
  return value;
}

function requireObject(body: unknown): Record<string, unknown> {
  if (body === undefined) throw problem('INVALID_BODY', messages.bodyNotObject());
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw problem('INVALID_BODY', messages.bodyNotObject());
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
        config: {
          scope: 'write:listings',
          documentedBody: listingWriteDoc,
          bodyExamples: putExamples,
          ifMatch: true,
        },
        schema: {
          summary: 'Create or replace a listing by your reference',
          description:
            'Upsert: 201 when the reference was new (with `Location`, where the listing is read), 200 when it replaced your listing (outcome `unchanged` when nothing differed; its updatedAt then stays). Safe to retry. With If-Match, the write applies only to that version of the listing (412 otherwise; `If-Match: *`: only if the listing exists). With `dryRun=true`: always 200, outcome would_create, would_update or would_be_unchanged, listingId null when the listing does not exist yet.',
          tags: ['Listings (write)'],
          params: referenceParams,
          querystring: dryRunQuery,
          response: {
            200: z.object({ data: writeResultSchema, meta: writeMeta }),
            201: z
              .object({ data: writeResultSchema, meta: writeMeta })
              .describe('Created (never on a dry run); `Location` names the new listing.'),
            ...versionedErrors,
          },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const ref = request.params.externalReference;
        const body = requireObject(request.body);
        const dryRun = request.query.dryRun ?? false;
        const { results, errors, etag } = await writes.upsert(partner, [{ index: 0, reference: ref, body }], {
          dryRun,
          single: { ifMatch: ifMatchOf(request) },
        });
        const failed = errors[0];
        if (failed) throw problem(failed.code, failed.message, failed.issues);
        const { index: _index, supersededBy: _s, ...result } = results[0]!;
        if (etag) reply.header('ETag', etag);
        // A dry run created nothing: 200, no Location (its outcome says what would happen).
        if (result.created && result.listingId !== null) {
          reply.status(201).header('Location', `${LISTING_PATH}${result.listingId}`);
        }
        return { data: result, meta: metaOf(partner, dryRun) };
      },
    );

    app.patch(
      '/listings/:externalReference',
      {
        config: {
          scope: 'write:listings',
          documentedBody: listingPatchDoc,
          bodyExamples: patchExamples,
          ifMatch: true,
        },
        schema: {
          summary: 'Change some fields of a listing (JSON Merge Patch)',
          description:
            'Send only the fields that change (`Content-Type: application/merge-patch+json` or `application/json`); null clears an optional field. The listing that results is validated as a whole, as in PUT. An unknown reference is 404: a patch never creates. A patch that changes nothing answers outcome `unchanged`, and updatedAt stays. With If-Match, the patch applies only to that version (412 otherwise).',
          tags: ['Listings (write)'],
          params: referenceParams,
          querystring: dryRunQuery,
          response: { 200: z.object({ data: writeResultSchema, meta: writeMeta }), ...versionedErrors },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const patch = requireObject(request.body);
        const dryRun = request.query.dryRun ?? false;
        const { result, etag } = await writes.patch(partner, request.params.externalReference, patch, {
          ifMatch: ifMatchOf(request),
          dryRun,
        });
        const { index: _index, supersededBy: _s, ...data } = result;
        reply.header('ETag', etag);
        return { data, meta: metaOf(partner, dryRun) };
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
            ...versionedErrors,
          },
        },
      },
      async (request) => {
        const partner = request.partner!;
        // Bulk takes no preconditions (docs/api.md says why); a header that cannot be honoured is
        // refused rather than ignored, so nobody believes a batch was written conditionally.
        if (request.headers['if-match'] !== undefined) {
          throw problem('PRECONDITION_FAILED', messages.bulkTakesNoIfMatch());
        }
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
          meta: metaOf(partner, dryRun),
        };
      },
    );

    app.post(
      '/listings/:externalReference/status',
      {
        config: {
          scope: 'write:listings',
          documentedBody: statusBodyDoc,
          bodyExamples: statusExamples,
          ifMatch: true,
        },
        schema: {
          summary: 'Change only the status of a listing',
          tags: ['Listings (write)'],
          params: referenceParams,
          querystring: dryRunQuery,
          response: { 200: z.object({ data: statusResult, meta: writeMeta }), ...versionedErrors },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const ref = request.params.externalReference;
        const dryRun = request.query.dryRun ?? false;
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
        const { etag, ...data } = await writes.changeStatus(
          partner,
          ref,
          status as (typeof ENUMS.status.values)[number],
          { ifMatch: ifMatchOf(request), dryRun },
        );
        reply.header('ETag', etag);
        return { data, meta: metaOf(partner, dryRun) };
      },
    );

    app.delete(
      '/listings/:externalReference',
      {
        config: { scope: 'write:listings', ifMatch: true },
        schema: {
          summary: 'Mark a listing as sold (soft delete; idempotent)',
          tags: ['Listings (write)'],
          params: referenceParams,
          querystring: dryRunQuery,
          response: { 200: z.object({ data: statusResult, meta: writeMeta }), ...versionedErrors },
        },
      },
      async (request, reply) => {
        const partner = request.partner!;
        const dryRun = request.query.dryRun ?? false;
        const { etag, ...data } = await writes.changeStatus(
          partner,
          request.params.externalReference,
          'sold',
          {
            ifMatch: ifMatchOf(request),
            dryRun,
          },
        );
        reply.header('ETag', etag);
        return { data, meta: metaOf(partner, dryRun) };
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
  if (body === undefined) throw problem('EMPTY_PAYLOAD', messages.bulkBodyForm('empty'));
  const items = Array.isArray(body)
    ? body
    : body !== null && typeof body === 'object'
      ? (body as { items?: unknown }).items
      : undefined;
  if (items === undefined && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    throw problem('EMPTY_PAYLOAD', messages.bulkBodyForm('no-items'));
  }
  if (!Array.isArray(items)) {
    throw problem('INVALID_BODY', messages.bulkBodyForm('other'));
  }
  // {"items": [...], "dryRun": true} must not quietly write for real: the wrapper has one field.
  if (!Array.isArray(body)) {
    const unknown = unknownKeyIssues(body as Record<string, unknown>, ['items'], 'field');
    if (unknown.length) throw invalidInput('body', unknown);
  }
  if (items.length === 0) throw problem('EMPTY_PAYLOAD', messages.emptyBulk());
  if (items.length > MAX_BULK_ITEMS) {
    throw problem('TOO_MANY_ITEMS', messages.tooManyItems(items.length, MAX_BULK_ITEMS));
  }
  return items;
}
