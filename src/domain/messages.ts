import { STATUS_CODES } from 'node:http';
import type { Issue } from './errors.js';

/**
 * The messages of the service's refusals, each made by one named factory: the code that throws
 * calls it, and so do the examples of the OpenAPI document (api/openapi/error-examples.ts), so an
 * example cannot say what the service no longer says (test/unit/messages.test.ts holds them to it).
 * The code, the status and what the partner should do stay in the table of domain/errors.ts.
 */

const IN_SCOPE = "this API secret's access scope";

/** The body a method takes: PATCH a JSON Merge Patch (or JSON), the others JSON. */
const bodyType = (method: string) =>
  method === 'PATCH' ? 'application/merge-patch+json (or application/json)' : 'application/json';

/**
 * Text ended as a sentence: a period, unless it already ends with one, a question or an exclamation
 * mark (an issue that asks "did you mean `mileage`?" must not become "…`mileage`?.").
 */
export const sentence = (text: string) => (/[.?!]$/.test(text) ? text : `${text}.`);

/** A header's value as a message may quote it: visible ASCII only, at most 80 characters. */
const printableHeader = (value: string) => {
  const visible = value.replace(/[^\x20-\x7e]/g, '?');
  return visible.length > 80 ? `${visible.slice(0, 80)}…` : visible;
};

export const messages = {
  /** "Invalid query: query.stauts is not a known parameter; … (and 2 more issues)." */
  invalidInput(what: string, issues: readonly Issue[]): string {
    const first = issues[0];
    const more =
      issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? 's' : ''})` : '';
    return first ? sentence(`Invalid ${what}: ${first.path} ${first.message}${more}`) : `Invalid ${what}.`;
  },
  /** A listing that failed validation: its first five issues in one sentence. */
  invalidListing(issues: readonly Issue[]): string {
    return sentence(
      `Invalid listing: ${issues
        .slice(0, 5)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}${issues.length > 5 ? ` (and ${issues.length - 5} more)` : ''}`,
    );
  },
  /** Without `where`: the parser's own words are not repeated (they quote the body). */
  invalidJson: (where?: string) =>
    where === undefined
      ? 'The request body is not valid JSON.'
      : `The request body is not valid JSON: ${where}.`,
  bodyNotObject: () => 'The request body must be a JSON object.',
  /** A bulk item that is not an object (an array or a string among the listings). */
  itemNotObject: () => 'A listing must be a JSON object.',
  /** Another write held the listing, and the retries ran out. */
  conflictingWrite: () => 'A conflicting write was in progress; retry shortly.',
  /** A PATCH whose listing changed under it each time it was applied. */
  keptChanging: () => 'The listing kept changing; retry shortly.',
  writeTooLong: () => 'The write took too long and was not applied; retry shortly.',
  restarting: () => 'The service is restarting; retry shortly.',
  pathSegmentTooLong: () => 'A path segment is too long.',
  /** A %-sequence in the path that decodes to no UTF-8 character. */
  brokenPercentEncoding: () => 'The path has a %-sequence that is not percent-encoded UTF-8.',
  contentLengthMismatch: () => 'The Content-Length header does not match the body.',
  emptyBody: () => 'The request body is empty; a JSON document was expected.',
  /** Status change, delete or patch of a reference this partner does not have. */
  noTestSecret: (partnerId: string) => `Partner ${partnerId} has no test secret.`,
  testModeOnly: () =>
    'This operation works on test data only: send it with your test secret (fc_test_…), not your live one.',
  testLimitReached: (limit: number, held: number, adding: number) =>
    `Test mode holds at most ${limit} listings per partner: you have ${held}, and this request would add ${adding}. Wipe your test data (DELETE /api/external/v1/test-data) or write fewer new references.`,
  noListingWithReference: (reference: string) =>
    `This partner has no listing with externalReference "${reference}".`,
  noWebhookEndpoint: (id: string) => `Webhook endpoint ${id} not found.`,
  /** POST /webhooks/{id}/test?type=… naming a type the endpoint does not subscribe to (or none there is). */
  testTypeNotSubscribed: (type: string, subscribed: readonly string[]) =>
    `This endpoint does not receive ${JSON.stringify(type)}: a test can send a sample of the types it subscribes to: ${subscribed.join(', ')} (PATCH its events to add one).`,
  invalidReference: (rule: string) => sentence(`externalReference ${rule}`),
  emptyBulk: () => 'No items: the list of listings is empty.',
  tooManyItems: (sent: number, max: number) =>
    `${sent} items sent; at most ${max} per request. Split the feed into batches of ${max}.`,
  // One answer for unknown, rotated-away and disabled secrets (docs/contract.md#presenting-a-secret):
  // get a current one.
  secretNotRecognized: () =>
    'The API secret is not recognized: it is well-formed, but unknown, rotated away or disabled. Ask the operator for a current secret.',
  httpsRequired: () =>
    'This API is served over HTTPS only. Resend the request to https:// (never send a secret over plain HTTP).',
  /** `anyOf`: one of the scopes is enough; else all of them are needed. */
  insufficientScope(needed: readonly string[], anyOf: boolean, has: readonly string[]): string {
    const names = needed.map((scope) => `"${scope}"`).join(anyOf ? ' or ' : ' and ');
    const plural = needed.length > 1 && !anyOf ? 's' : '';
    return `This operation needs the scope${plural} ${names}; this API secret has: ${has.join(', ') || 'none'}.`;
  },
  dealerNotInScope: (id: string) => `Dealer profile ${id} is not in ${IN_SCOPE}.`,
  locationCodeNotInScope: (code: string) => `Location code "${code}" is not in ${IN_SCOPE}.`,
  /** A global partner's dealer that does not exist (nothing is outside its scope). */
  noDealerWithId: () => 'no dealer profile has this id; see GET /locations for the ids',
  noDealerWithCode: () => 'no dealer profile has this location code; see GET /locations for the codes',
  /** A listing of the partner's whose dealer the partner's access no longer covers. */
  listingDealerNotInScope: (reference: string, dealerProfileId: string) =>
    `Listing "${reference}" belongs to dealer profile ${dealerProfileId}, which is not in ${IN_SCOPE}.`,
  listingNotFound: (id: string) => `No listing ${id} in ${IN_SCOPE}.`,
  /**
   * GET /listings/{id} of an id that is no listing: how to read by reference, and, when the partner
   * has a listing whose reference is this text, that listing's id (it is the partner's own).
   */
  listingIdNotFound: (id: string, idOfReference?: string) =>
    idOfReference === undefined
      ? `No listing ${id} in ${IN_SCOPE}. This path takes the service's listing id; to read a listing by your own reference use GET /listings?externalReference=…&status=all.`
      : `No listing ${id} in ${IN_SCOPE}, but your listing with externalReference "${id}" has id ${idOfReference}: this path takes the service's listing id. Read it with GET /listings/${idOfReference}, or by reference with GET /listings?externalReference=${encodeURIComponent(id)}&status=all.`,
  locationNotFound: (id: string) => `No location ${id} in ${IN_SCOPE}.`,
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    `${method} is not allowed here; allowed: ${allowed.join(', ')}.`,
  /** An unknown path, named up to 100 characters: it is the client's text, kept in request records. */
  noRoute: (method: string, path: string) =>
    `No route ${method} ${path.length > 100 ? `${path.slice(0, 100)}… (${path.length} characters)` : path}.`,
  missingContentType: (method: string) =>
    `A ${method} request must have a Content-Type header; send its body as ${bodyType(method)}.`,
  missingBody: (method: string) => `A ${method} request must have a body.`,
  /** A 4xx the HTTP framework raised (not one of ours): its status, in our words. */
  requestRefused: (status: number) =>
    `The request cannot be served: ${STATUS_CODES[status] ?? 'client error'} (HTTP ${status}).`,
  bodyTooLarge: () => 'The request body is larger than the 5 MiB limit.',
  /** A body of another media type; a PATCH takes a JSON Merge Patch (RFC 7396), so it is named. */
  notJson: (method?: string) =>
    method === 'PATCH'
      ? 'A PATCH body must be sent as Content-Type: application/merge-patch+json (a JSON Merge Patch, RFC 7396) or application/json.'
      : 'Request bodies must be sent as Content-Type: application/json.',
  rateLimited: (limit: number, retryAfterS: number) =>
    `Rate limit of ${limit} requests a minute exceeded for this partner; retry after ${retryAfterS} s.`,
  lengthAndChunked: () => 'The request has both Content-Length and Transfer-Encoding.',
  requestTimeout: () => 'The request did not arrive in time.',
  uriTooLong: () => 'The request line (path and query string) is too long.',
  headersTooLarge: () => 'The request headers are too large (16 KiB in all).',
  unexpected: () => 'An unexpected error occurred.',
  databaseUnavailable: () => 'The database is unavailable; retry shortly.',
  endpointHeldByOperator: (reason: string | null) =>
    `The operator disabled this endpoint (${reason}); only the operator can enable it again: contact them.`,
  /** A failed If-Match: `current` is the listing's ETag, undefined when the partner has none. */
  staleIfMatch: (reference: string, current: string | undefined) =>
    current === undefined
      ? `If-Match names a version of listing "${reference}", but this partner has no listing with that reference.`
      : `Listing "${reference}" has changed since the version your If-Match names; its current ETag is ${current}. Read it again and apply your change to the current version.`,

  /** An If-Match that is no entity-tag list (RFC 9110 §8.8.3, §13.1.1): `sent` is the header. */
  malformedIfMatch: (sent: string) =>
    `If-Match is malformed: ${printableHeader(sent)} is not an entity tag. An entity tag is quoted: send the ETag exactly as you received it, quotes included (If-Match: "${printableHeader(sent.replace(/"/g, '').trim())}"); RFC 9110 allows "…" or W/"…", several separated by commas, or *.`,

  /** A byte outside what a URL may hold unencoded: where it is (a 0-based character index). */
  urlNotEncoded: (index: number) =>
    `The URL has a character that is not percent-encoded at character ${index}: send the path and query as percent-encoded UTF-8.`,
  /** A decoded path with a control character or the like: `what` names it. */
  pathHasCharacter: (what: string, index: number) =>
    `The path contains ${what} at character ${index}; no resource has one.`,
  mergePatchIsForPatch: () =>
    'application/merge-patch+json is for PATCH; send this body as Content-Type: application/json.',
  notUtf8: (byteHex: string, at: number) =>
    `The request body is not valid UTF-8: byte 0x${byteHex} at offset ${at} is not part of a UTF-8 character. Send the body encoded as UTF-8 (a Latin-1 or Windows-1252 export must be converted first).`,
  /** `charset`: the declared one, already made printable. */
  charsetNotUtf8: (charset: string) =>
    `The body declares charset=${charset}; this API takes JSON in UTF-8 only. Send Content-Type: application/json (or with charset=utf-8) and the body encoded as UTF-8.`,
  /** `encoding`: the request's Content-Encoding, already made printable. */
  compressedBody: (encoding: string) =>
    `The request body is sent with Content-Encoding: ${encoding}; this API takes request bodies uncompressed. Send the body without Content-Encoding (answers are compressed when you send Accept-Encoding).`,
  reservedName: (where: string, what: string) => `The request body cannot be kept: ${where} ${what}.`,
  numberNotHeld: (where: string, number: string, why: string) =>
    `The request body cannot be kept as sent: ${where} is ${number}, which ${why}.`,
  bodyShapeTooLarge: (where: string, what: string) =>
    `The request body is too large in shape: ${where} ${what}.`,
  hostHeaders: (count: number) =>
    count === 0 ? 'The request has no Host header.' : 'The request has more than one Host header.',
  bulkTakesNoIfMatch: () =>
    'POST /listings/bulk-upsert takes no If-Match: it writes many listings, each as the feed has it. Nothing was written. Leave the header out, or write the listing with PUT or PATCH and If-Match.',
  /** A bulk body of neither accepted form; `form` says which it was. */
  bulkBodyForm: (form: 'empty' | 'no-items' | 'other') =>
    form === 'empty'
      ? 'No items: send a JSON array of listings or {"items": [...]}.'
      : form === 'no-items'
        ? 'No items: the object has no "items" array.'
        : 'The body must be a JSON array of listings or an object {"items": [...]}.',
  referenceRequired: () => 'externalReference is required.',
  referenceMismatch: (reference: string) =>
    `must be ${JSON.stringify(reference)}, the reference this write addresses: a listing's reference cannot change (leave it out, or send it as it is)`,
  noConsoleFile: (file: string) => `No console file ${file}.`,
  notReady: (why: string) => `Not ready: ${why}.`,
  noFailedRequest: (requestId: string) =>
    `No failed request with id "${requestId}" is on record. Only failed requests (4xx and 5xx) are kept, for a limited time; a request that succeeded has no record.`,
  operatorNameTaken: (name: string) =>
    `An operator token named "${name}" already exists; revoke it first or choose another name.`,
  noLiveOperatorToken: (id: string) => `No live operator token ${id}.`,
  noDealerProfile: (id: string) => `No dealer profile ${id}.`,
  noPartner: (id: string) => `No partner ${id}.`,
  /** An operator's read of a listing (any partner's, live or test) by an id that is none. */
  noListing: (id: string) => `No listing ${id}.`,
  noPartnerListing: (partnerId: string, reference: string, test: boolean) =>
    `Partner ${partnerId} has no ${test ? 'test' : 'live'} listing with externalReference "${reference}".`,
  locationCodeInUse: (code: string) =>
    `Location code "${code}" is already in use (codes are case-insensitive).`,
  tooManyEndpoints: (max: number) =>
    `A partner may have at most ${max} webhook endpoints; delete one you no longer use.`,

  /* The messages of single issues (a field's path goes before them). */

  /** A listing on offer (active or pending) has a price: docs/contract.md#price-rule. */
  priceRequired: (status: string) => `is required when the status is ${status}`,
  /** `max` is next calendar year, named as a number (it moves each 1 January). */
  yearRange: (max: number) => `must be between 1900 and ${max}`,
  /** A bound of a number, both ends named. */
  between: (min: number, max: number) => `must be between ${min} and ${max}`,
  positiveInteger: () => 'must be a positive integer',
  atMostTwoDecimals: () => 'must have at most 2 decimals',
  unknownDealerProfiles: (ids: readonly string[]) => `unknown dealer profile ${ids.join(', ')}`,
  sinceTooFarBack: (days: number) => `at most ${days} days back`,
  /** A cursor given with another sort than the one cursors follow. */
  cursorNeedsUpdatedAt: () => 'works with sort=updatedAt only',
  notDeliveryCursor: () =>
    "is not the cursor of a delivery of this endpoint; pass a delivery's cursor exactly as received",
  /** A word no value or alias of an enumeration matches (the first 50 characters of it). */
  notAllowed: (raw: string, allowed: readonly string[]) =>
    `"${raw.slice(0, 50)}" is not allowed; allowed: ${allowed.join(', ')}`,

  /* Operators' actions of the console (issue 46): ending a grace, names, webhook triage. */

  /** POST /partners/{id}/retire-previous-secret with no grace under way. */
  noPreviousSecret: (id: string) =>
    `Partner ${id} has no previous secret in a grace period: nothing to retire. Its current secret is the only one that works.`,
  /** A revoked operator's name: never given again, so the audit log tells the two apart. */
  operatorNameRevoked: (name: string, revokedAt: string) =>
    `An operator named "${name}" had a token, revoked at ${revokedAt}; a name is never given to a second operator, so the audit log cannot mix them up. Choose another name (a surname or initial).`,
  /** POST /webhooks/{id}/retry on a disabled endpoint. */
  retryDisabledEndpoint: (id: string) =>
    `Webhook endpoint ${id} is disabled: resume it instead (the delivery that was failing is sent first).`,
  /** POST /webhooks/{id}/retry with no delivery waiting. */
  nothingToRetry: (id: string) =>
    `Webhook endpoint ${id} has no failing deliveries, of listings or of events: nothing to retry. Send a test ping to check the receiver.`,
} as const;
