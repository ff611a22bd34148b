import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listingsQuery } from '../../src/api/external/v1/listings/query-schema.js';
import { BROKEN_JSON, ERROR_EXAMPLES } from '../../src/api/openapi/error-examples.js';
import { recordIssues } from '../../src/api/openapi/request-examples.js';
import { type Access, assertInScope } from '../../src/domain/access.js';
import { ENUMS } from '../../src/domain/enums.js';
import { type ProblemCode, ProblemError, zodIssues } from '../../src/domain/errors.js';
import { malformedIfMatch, preconditionFailed } from '../../src/domain/etag.js';
import { LISTING_ID, REFERENCE } from '../../src/domain/listings/example.js';
import { listingBodySchema, referenceRule } from '../../src/domain/listings/input.js';
import { prepare, validationFailed } from '../../src/domain/listings/items.js';
import { messages } from '../../src/domain/messages.js';
import { httpsRequired } from '../../src/http/door.js';
import { toProblem } from '../../src/http/errors.js';
import { parseJsonBody } from '../../src/http/json-body.js';
import { methodNotAllowed } from '../../src/http/method-not-allowed.js';
import { invalidInput, validatorCompiler } from '../../src/http/validation.js';
import { DbError } from '../../src/store/errors.js';

/*
 * The OpenAPI document's error examples say what the service says: each message is the one its
 * factory (domain/messages.ts) makes, and where a function of the service throws it, what that
 * function throws for the example's input. A message changed in one place changes in both, or
 * this fails.
 */

const refusal = (fn: () => unknown): ProblemError => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ProblemError, `not a ProblemError: ${String(error)}`);
    return error;
  }
  assert.fail('nothing was thrown');
};

const example = (code: ProblemCode) => ERROR_EXAMPLES[code as keyof typeof ERROR_EXAMPLES];

/** Each code's example, as its factory makes it. */
const FROM_FACTORIES: Record<keyof typeof ERROR_EXAMPLES, () => string> = {
  INVALID_QUERY: () => messages.invalidInput('query', example('INVALID_QUERY').issues ?? []),
  INVALID_JSON: () =>
    messages.invalidJson("expected ',' or '}' after property value at line 1, column 34 (character 33)"),
  INVALID_BODY: () => messages.bodyNotObject(),
  INVALID_REFERENCE: () => messages.invalidReference(referenceRule),
  INVALID_HEADER: () => messages.malformedIfMatch('h3Kq0m2bXl9Zc1TqYw8fRk4vD0a'),
  EMPTY_PAYLOAD: () => messages.emptyBulk(),
  TOO_MANY_ITEMS: () => messages.tooManyItems(250, 100),
  UNAUTHORIZED: () => messages.secretNotRecognized(),
  HTTPS_REQUIRED: () => messages.httpsRequired(),
  INSUFFICIENT_SCOPE: () =>
    messages.insufficientScope(['write:listings'], false, ['read:listings', 'read:locations']),
  PROFILE_FORBIDDEN: () => messages.locationCodeNotInScope('DUPONT-LIEGE'),
  TEST_MODE_ONLY: () => messages.testModeOnly(),
  TEST_LIMIT_REACHED: () => messages.testLimitReached(10_000, 9_990, 25),
  NOT_FOUND: () => messages.listingNotFound(LISTING_ID),
  METHOD_NOT_ALLOWED: () => messages.methodNotAllowed('PATCH', ['GET', 'PUT', 'DELETE']),
  PAYLOAD_TOO_LARGE: () => messages.bodyTooLarge(),
  UNSUPPORTED_MEDIA_TYPE: () => messages.notJson('PUT'),
  VALIDATION_FAILED: () => messages.invalidListing(example('VALIDATION_FAILED').issues ?? []),
  RATE_LIMITED: () => messages.rateLimited(600, 12),
  BAD_REQUEST: () => messages.lengthAndChunked(),
  REQUEST_TIMEOUT: () => messages.requestTimeout(),
  URI_TOO_LONG: () => messages.uriTooLong(),
  HEADERS_TOO_LARGE: () => messages.headersTooLarge(),
  SERVER_ERROR: () => messages.unexpected(),
  SERVICE_UNAVAILABLE: () => messages.databaseUnavailable(),
  CONFLICT: () =>
    messages.endpointHeldByOperator('disabled by the operator: answers 200 to everything without storing'),
  PRECONDITION_FAILED: () => messages.staleIfMatch(REFERENCE, '"h3Kq0m2bXl9Zc1TqYw8fRk4vD0a"'),
};

for (const code of Object.keys(FROM_FACTORIES) as (keyof typeof ERROR_EXAMPLES)[]) {
  test(`the ${code} example's message is its factory's`, () => {
    assert.equal(ERROR_EXAMPLES[code].message, FROM_FACTORIES[code]());
  });
}

test('every error code has an example, and the examples name no code the table lacks', () => {
  assert.deepEqual(Object.keys(ERROR_EXAMPLES).sort(), Object.keys(FROM_FACTORIES).sort());
});

const schema = listingBodySchema({
  historyReportHosts: ['www.car-pass.be'],
  today: () => new Date('2026-06-15T00:00:00Z'),
});

test('the examples are what the service throws for their inputs', () => {
  const query = validatorCompiler({
    schema: listingsQuery,
    method: 'GET',
    url: '/listings',
    httpPart: 'querystring',
  })({ stauts: 'active', pageSize: '0' }) as { error: ProblemError };
  assert.equal(query.error.message, example('INVALID_QUERY').message);
  assert.deepEqual(query.error.issues, example('INVALID_QUERY').issues);

  assert.equal(
    refusal(() => parseJsonBody('application/json', Buffer.from(BROKEN_JSON))).message,
    example('INVALID_JSON').message,
  );
  const notAnObject = validatorCompiler({ schema, method: 'PUT', url: '/x', httpPart: 'body' })([1]) as {
    error: ProblemError;
  };
  assert.equal(notAnObject.error.message, example('INVALID_BODY').message);
  const reference = prepare(schema, { index: 0, reference: ' STOCK-2026-0042', body: {} });
  assert.ok(reference instanceof ProblemError);
  assert.equal(reference.message, example('INVALID_REFERENCE').message);
  assert.equal(httpsRequired().message, example('HTTPS_REQUIRED').message);
  assert.equal(
    methodNotAllowed('PATCH', ['GET', 'PUT', 'DELETE']).message,
    example('METHOD_NOT_ALLOWED').message,
  );
  const framework = (code: string) => toProblem(Object.assign(new Error(code), { code })).message;
  assert.equal(framework('FST_ERR_CTP_BODY_TOO_LARGE'), example('PAYLOAD_TOO_LARGE').message);
  assert.equal(framework('FST_ERR_CTP_INVALID_MEDIA_TYPE'), example('UNSUPPORTED_MEDIA_TYPE').message);
  assert.equal(toProblem(new Error('boom')).message, example('SERVER_ERROR').message);
  assert.equal(
    toProblem(new DbError({ code: '53300', message: 'too many connections' }, 'Q')).message,
    example('SERVICE_UNAVAILABLE').message,
  );
  const validation = example('VALIDATION_FAILED');
  assert.equal(validationFailed(validation.issues ?? []).message, validation.message);
  assert.equal(
    preconditionFailed(REFERENCE, '"h3Kq0m2bXl9Zc1TqYw8fRk4vD0a"').message,
    example('PRECONDITION_FAILED').message,
  );
  assert.equal(malformedIfMatch('h3Kq0m2bXl9Zc1TqYw8fRk4vD0a')?.message, example('INVALID_HEADER').message);
});

test("the VALIDATION_FAILED example's issues are the listing schema's for its body", () => {
  const parsed = schema.safeParse({ title: 'Golf', mileage: 2_000_001 });
  assert.ok(!parsed.success);
  const mileage = zodIssues(parsed.error).find((issue) => issue.path === 'mileage');
  assert.deepEqual(
    mileage,
    example('VALIDATION_FAILED').issues?.find((issue) => issue.path === 'mileage'),
  );
});

test("the request record example's issues are the listing schema's for its body", () => {
  const parsed = schema.safeParse({ title: 'Golf', fuelType: 'steam', price: 21950.505 });
  assert.ok(!parsed.success);
  assert.deepEqual(zodIssues(parsed.error), recordIssues);
  assert.equal(recordIssues[1]!.message.endsWith(ENUMS.fuelType.values.join(', ')), true);
});

test('one sentence for a dealer outside the scope, whichever use case refuses it', () => {
  const access: Access = { scope: 'restricted', rootProfileIds: ['a'], profileIds: ['a'] };
  assert.equal(refusal(() => assertInScope(access, ['b'])).message, messages.dealerNotInScope('b'));
  assert.equal(
    messages.listingDealerNotInScope('STOCK-1', 'b'),
    'Listing "STOCK-1" belongs to dealer profile b, which is not in this API secret\'s access scope.',
  );
});

test('invalid input: the first issue, then how many more', () => {
  const issue = (path: string) => ({ path, message: 'is wrong', code: 'custom' });
  assert.equal(invalidInput('query', [issue('query.a')]).message, 'Invalid query: query.a is wrong.');
});
