import { z } from 'zod';
import { ENUMS } from '../../../../domain/enums.js';
import { IMAGE_STATES } from '../../../../domain/images/classify.js';
import { caseInsensitive } from '../../../../domain/listings/field-types.js';
import { referenceSchema } from '../../../../domain/listings/input.js';
import { DEFAULT_PAGE_SIZE, type ListingQuery, MAX_PAGE_SIZE } from '../../../../domain/listings/reads.js';
import { SORTS } from '../../../../store/listings/reads.js';
import {
  booleanParam,
  cursorParam,
  DATE_TIME_WORDS,
  dateTimeParam,
  pick,
  positiveIntParam,
  textParam,
  uuidParam,
} from '../../../schemas/query.js';

const statusParam = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .pipe(
    z.enum([...ENUMS.status.values, 'all'], {
      error: `must be one of ${[...ENUMS.status.values, 'all'].join(', ')}`,
    }),
  )
  .meta({ 'x-query-type': { type: 'string', pattern: caseInsensitive([...ENUMS.status.values, 'all']) } });

/** A partner's own reference, by the same rule as on writes (a reference can never match otherwise). */
const referenceParam = referenceSchema;

/** Query parameters shared by GET /listings and GET /locations/{id}/listings. */
export const paging = {
  page: positiveIntParam.optional().describe('1-based page number. Alias: page_number.'),
  page_number: positiveIntParam.optional().describe('Alias of page.'),
  pageSize: positiveIntParam
    .optional()
    .describe(
      `Items per page, default ${DEFAULT_PAGE_SIZE}; above ${MAX_PAGE_SIZE} is clamped. Aliases: page_size, limit.`,
    ),
  page_size: positiveIntParam.optional().describe('Alias of pageSize.'),
  limit: positiveIntParam.optional().describe('Alias of pageSize.'),
  status: statusParam.optional().describe('active (default), pending, sold, draft, or all.'),
  updatedSince: dateTimeParam
    .optional()
    .describe(
      `Only listings with updatedAt >= this ISO 8601 instant, e.g. 2026-11-22T10:00:00Z, 2026-11-22T11:00:00+01:00, 2026-11-22 10:00 (a space for the T; no offset means UTC) or 2026-11-22 (midnight UTC). A + left unencoded in the URL arrives as a space and is still read as an offset after a time. ${DATE_TIME_WORDS} Alias: updated_since.`,
    ),
  updated_since: dateTimeParam.optional().describe(`Alias of updatedSince. ${DATE_TIME_WORDS}`),
  cursor: cursorParam
    .optional()
    .describe(
      'pagination.nextCursor of an earlier page (same filters, sort=updatedAt): continue strictly after it; page is ignored. Only a cursor this service issued is taken.',
    ),
  sort: z
    .enum(SORTS, { error: `must be one of ${SORTS.join(', ')}` })
    .optional()
    .describe('Order; ties are broken by id. Default updatedAt.'),
  locationCode: textParam(64).optional().describe('Case-insensitive location code. Alias: location_code.'),
  location_code: textParam(64).optional().describe('Alias of locationCode.'),
  readiness: z
    .enum(['live', 'not_live'], { error: 'must be one of live, not_live' })
    .optional()
    .describe(
      'live: only listings that can be shown (readiness.live); not_live: only those that cannot. See docs/images.md, "Readiness".',
    ),
  imageState: z
    .enum(IMAGE_STATES, { error: `must be one of ${IMAGE_STATES.join(', ')}` })
    .optional()
    .describe('Only listings with at least one image whose check is in this state, e.g. unreachable.'),
  mine: booleanParam
    .optional()
    .describe(
      'true: only the listings written with your own API secrets (your references), e.g. to compare your stock with a feed. Default false: every listing in your access scope.',
    ),
};

type PagingInput = { [K in keyof typeof paging]?: z.output<(typeof paging)[K]> };

export function resolvePaging(
  q: PagingInput,
): Omit<ListingQuery, 'dealerIds' | 'parentDealerId' | 'externalReference'> {
  return {
    page: pick(q.page, q.page_number) ?? 1,
    pageSize: Math.min(pick(q.pageSize, q.page_size, q.limit) ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    status: q.status ?? 'active',
    updatedSince: pick(q.updatedSince, q.updated_since),
    sort: q.sort ?? 'updatedAt',
    locationCode: pick(q.locationCode, q.location_code),
    cursor: q.cursor,
    mine: q.mine ?? false,
    readiness: q.readiness,
    imageState: q.imageState,
  };
}

export const listingsQuery = z
  .object({
    ...paging,
    dealerId: uuidParam.optional().describe('Only this dealer profile.'),
    locationId: uuidParam.optional().describe('Only this dealer/location profile.'),
    profileId: uuidParam.optional().describe('Only this dealer/location profile. Alias: userId.'),
    userId: uuidParam.optional().describe('Alias of profileId.'),
    parentDealerId: uuidParam
      .optional()
      .describe('This parent dealer and all its child locations. Aliases: parentId, companyId.'),
    parentId: uuidParam.optional().describe('Alias of parentDealerId.'),
    companyId: uuidParam.optional().describe('Alias of parentDealerId.'),
    externalReference: referenceParam
      .optional()
      .describe(
        'Only your own listing with this exact reference (0 or 1 listing): read back what you wrote. Combine with status=all to find it whatever its status. Alias: external_reference.',
      ),
    external_reference: referenceParam.optional().describe('Alias of externalReference.'),
  })
  .transform((q): ListingQuery => {
    return {
      ...resolvePaging(q),
      // dealerId, locationId and profileId each name one profile; several given must all match.
      dealerIds: [q.dealerId, q.locationId, pick(q.profileId, q.userId)].filter((v): v is string => !!v),
      parentDealerId: pick(q.parentDealerId, q.parentId, q.companyId),
      externalReference: pick(q.externalReference, q.external_reference),
    };
  });
