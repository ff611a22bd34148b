import { ENUMS } from '../../domain/enums.js';
import { messages } from '../../domain/messages.js';

/**
 * Examples of the request-record operations for the reference page. test/openapi.test.ts
 * validates each against the schema it illustrates.
 */

type Example = { summary: string; value: unknown };

/** What a body with fuelType "steam" and price 21950.505 is refused for. */
export const recordIssues = [
  { path: 'price', message: messages.atMostTwoDecimals(), code: 'custom' },
  { path: 'fuelType', message: messages.notAllowed('steam', ENUMS.fuelType.values), code: 'custom' },
];

const record = {
  requestId: 'sync-2026-11-25-0042',
  at: '2026-11-25T09:14:03.118Z',
  method: 'PUT',
  route: '/listings/{listing}',
  status: 422,
  code: 'VALIDATION_FAILED',
  message: messages.invalidListing(recordIssues),
  issues: recordIssues,
  issueCount: 2,
  durationMs: 4.2,
  key: 'current',
  test: false,
};

const retired = {
  requestId: '0c9e4f1a-7b2d-4e8c-a5f3-6d1b9e2c7a40',
  at: '2026-11-25T08:01:40.502Z',
  method: 'GET',
  route: '/listings',
  status: 401,
  code: 'UNAUTHORIZED',
  message: messages.secretNotRecognized(),
  issues: [],
  issueCount: 0,
  durationMs: 1.1,
  key: 'retired',
  test: false,
};

export const REQUEST_RESPONSE_EXAMPLES: Record<string, Record<number, Record<string, Example>>> = {
  listRequests: {
    200: {
      failures: {
        summary: 'A refused write, and a client still sending a secret a rotation retired',
        value: {
          data: [record, retired],
          meta: { failuresNotKept: 0 },
          pagination: { pageSize: 50, hasMore: false },
        },
      },
    },
  },
  getRequest: { 200: { failure: { summary: 'Why a request failed', value: { data: record } } } },
};
