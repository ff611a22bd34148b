/**
 * The client's public types. Resource and response shapes come from ./openapi.ts, which
 * is generated from docs/openapi.json: nothing here repeats a field list by hand.
 */
import type { Mode } from './mode.js';
import type { components, operations } from './openapi.js';

export type { Mode } from './mode.js';

type Schemas = components['schemas'];
/** The JSON body of an operation's 200 answer. */
type Ok<Op extends keyof operations> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
type Body<Op extends keyof operations, Status extends number> = operations[Op]['responses'] extends {
  [S in Status]: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type Req<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

// Resources.
/** A listing as read (GET /listings, GET /listings/{id}). */
export type Listing = Schemas['Listing'];
/**
 * The enumerated fields of a listing as written, each typed as its canonical values: the literal
 * unions of the read shape (`Listing`), generated from the document, never written again here.
 */
type EnumField =
  | 'status'
  | 'fuelType'
  | 'transmission'
  | 'bodyType'
  | 'driveType'
  | 'vehicleType'
  | 'emissionClass'
  | 'co2Type'
  | 'paintType'
  | 'interiorMaterial';
/** An enumerated field as written: a canonical value, null or '' (both clear it). */
type Enumerated = {
  [K in EnumField]?: NonNullable<Listing[K]> | '' | null;
} & { conditionTags?: Listing['conditionTags'] | null };
/**
 * A listing as written in the service's own words (PUT body, bulk item): the enumerations are
 * their canonical values (`fuelType: 'petrol' | 'diesel' | …`), checked by the compiler. Bulk items
 * also need `externalReference`. The service also takes documented aliases (`Benzine`, `Automaat`:
 * GET /reference/enums); a feed that sends its own words types them as `ListingWords`.
 */
export type ListingInput = Omit<ListingWords, EnumField | 'conditionTags'> & Enumerated;
/** A listing as the document takes it: enumerations as any text, aliases included (`'Benzine/LPG'`). */
export type ListingWords = Schemas['ListingWrite'];
/** A JSON Merge Patch of a listing: only the fields named change; null clears one. */
export type ListingPatch = Omit<Schemas['ListingPatch'], EnumField | 'conditionTags'> & Enumerated;
/** A write's answer with the listing's new version: send `etag` as `ifMatch` on the next write. */
export type Versioned<T> = T & { etag: string };
/** Writes to one listing: `ifMatch` (an ETag, or '*') makes the write apply only to that version. */
export interface VersionedWriteOptions extends CallOptions {
  ifMatch?: string;
}
export type ListingStatus = Listing['status'];
export type Location = Schemas['Location'];
export type Dealer = Schemas['Dealer'];
/** The error envelope's `error` object. */
export type ErrorBody = Schemas['ErrorResponse']['error'];
export type ErrorCode = ErrorBody['code'];
/** One failed input field: `path` like `price` or `images.3`. */
export type Issue = NonNullable<ErrorBody['issues']>[number];

// Queries.
/**
 * The `status` filter: one status, or `all`. The document types it as a string (the service also
 * takes it in any case), which let `'actve'` compile and fail only at the service.
 */
export type StatusFilter = ListingStatus | 'all';
type WithStatusFilter<Q> = Omit<Q, 'status'> & { status?: StatusFilter };
export type ListingQuery = WithStatusFilter<Query<'listListings'>>;
export type LocationQuery = Query<'listLocations'>;
export type LocationListingsQuery = WithStatusFilter<Query<'listLocationListings'>>;
/** GET /listings filters for `iterate()`: it pages by cursor, sorted by updatedAt, on its own. */
export type IterateQuery = Omit<ListingQuery, 'page' | 'page_number' | 'sort'>;

// Answers.
export type ListingPage = Ok<'listListings'>;
export type Pagination = ListingPage['pagination'];
export type LocationListingPage = Ok<'listLocationListings'>;
export type LocationList = Ok<'listLocations'>;
type AnyWriteResult = Ok<'upsertListing'>['data'];
/** The outcomes of a dry run (`dryRun: true`): what the write would do; nothing was written. */
export type DryRunOutcome = 'would_create' | 'would_update' | 'would_be_unchanged';
/** PUT and PATCH: listingId, externalReference, status, created, outcome, as written. */
export type WriteResult = Omit<AnyWriteResult, 'listingId' | 'outcome' | 'dryRun'> & {
  listingId: string;
  outcome: Exclude<AnyWriteResult['outcome'], DryRunOutcome>;
};
/**
 * The same write's dry run: `outcome` says what it would do, `created` is false, and `listingId` is
 * null when the listing does not exist yet (it gets an id only when written).
 */
export type DryRunWriteResult = Omit<AnyWriteResult, 'outcome' | 'dryRun'> & {
  outcome: DryRunOutcome | 'superseded';
  dryRun: true;
};
type AnyStatusResult = Ok<'setListingStatus'>['data'];
/** POST /listings/{ref}/status and DELETE /listings/{ref}: outcome updated or unchanged. */
export type StatusResult = Omit<AnyStatusResult, 'outcome' | 'dryRun'> & {
  outcome: Exclude<AnyStatusResult['outcome'], DryRunOutcome>;
};
/** The same change's dry run: outcome would_update or would_be_unchanged. */
export type DryRunStatusResult = Omit<AnyStatusResult, 'outcome' | 'dryRun'> & {
  outcome: DryRunOutcome;
  dryRun: true;
};
/** A write's answer, written or (with `dryRun: true` in its options) its dry run. */
export type WriteAnswer<Dry extends boolean | undefined> = Dry extends true ? DryRunWriteResult : WriteResult;
export type StatusAnswer<Dry extends boolean | undefined> = Dry extends true
  ? DryRunStatusResult
  : StatusResult;
/** Options of a write that can be a dry run: `dryRun: true` validates and resolves, writes nothing. */
export interface DryRunOptions<Dry extends boolean | undefined = undefined> extends VersionedWriteOptions {
  dryRun?: Dry;
}
/** POST /listings/bulk-upsert, one request of at most 100 items, as the service answers it. */
export type BulkResult = Ok<'bulkUpsertListings'>['data'];
export type Enums = Ok<'getEnums'>['data'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** POST /webhooks: the endpoint with its signing secret, shown only then. */
export type CreatedWebhookEndpoint = Body<'createWebhookEndpoint', 201>['data'];
export type RotatedWebhookSecret = Ok<'rotateWebhookSecret'>['data'];
export type WebhookDeliveryPage = Ok<'listWebhookDeliveries'>;
export type WebhookInput = Req<'createWebhookEndpoint'>;
export type WebhookChange = Req<'updateWebhookEndpoint'>;
export type WebhookDeliveryQuery = Query<'listWebhookDeliveries'>;
/** POST /webhooks/{id}/test: `type` sends a sample of an event type the endpoint subscribes to. */
export type WebhookTestQuery = Query<'testWebhookEndpoint'>;
/** GET /events: events of your listings (image checks, readiness), oldest first, cursor paged. */
export type EventPage = Ok<'listEvents'>;
export type EventQuery = Query<'listEvents'>;
export type RequestRecord = Schemas['RequestRecord'];
export type RequestRecordPage = Ok<'listRequests'>;
export type RequestRecordQuery = Query<'listRequests'>;
/** What a delivery's body holds (verifyWebhook returns it). */
export interface WebhookPayload {
  type: 'listings.changed' | 'ping';
  /** The listings in their state at delivery, in (updatedAt, id) order; empty for a ping. */
  data: Listing[];
  /** The position after the last listing: POST /webhooks/{id}/resume {cursor} replays from it. */
  cursor: string;
}
/**
 * What an upsert did to a listing (`superseded`: a later item of the same request had its
 * reference), or in a dry run what it would do (would_create, would_update, would_be_unchanged).
 */
export type UpsertOutcome = AnyWriteResult['outcome'];

// Options.
/** Options every call takes. */
export interface CallOptions {
  /** Cancels the call, its retries and waits included; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Retries after a network failure, a 5xx or a 429 (default: the client's `retries`). */
  maxRetries?: number;
  /** Sent as X-Request-Id (up to 128 visible ASCII characters); quote it when you ask for help. */
  requestId?: string;
}

/** Why the client is about to wait before (re)sending a request. */
export interface WaitInfo {
  reason: 'rate-limited' | 'server-error' | 'network-error' | 'pacing';
  method: string;
  /** Path under the API base, e.g. `/listings/bulk-upsert`. */
  path: string;
  /** The attempt that failed (1 = the first); 0 for `pacing`, which waits before a first attempt. */
  attempt: number;
  /** How long the client waits now. */
  delayMs: number;
  /** What the service asked for (Retry-After or RateLimit-Reset), when it did. */
  requestedMs?: number;
  /** HTTP status of the failed attempt. */
  status?: number;
  /** The network error of the failed attempt. */
  error?: unknown;
}

export interface ClientOptions {
  /** Service origin, e.g. `https://localhost:8443`; the API path `/api/external/v1` is added (a base that already ends with it is kept). */
  baseUrl: string;
  /** Your API secret (`fc_...`), sent as `Authorization: Bearer`. */
  secret: string;
  /** PEM certificate(s) to trust besides the system's, e.g. the demo's self-signed `data/tls/localhost-cert.pem`. */
  ca?: string | Buffer;
  /** An undici Dispatcher (Agent, ProxyAgent, ...) for the connection; wins over `ca`. */
  dispatcher?: import('undici').Dispatcher;
  /** A fetch to send requests with (default: the global fetch, or undici's when `ca`/`dispatcher` is set). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** User-Agent header; default `forecourt-client/<version>`. */
  userAgent?: string;
  /** Retries per request after a network failure, a 5xx or a 429 (default 4; 0 = never). */
  retries?: number;
  /** First backoff step in ms (default 500): attempt n waits about base × 2^(n-1), with jitter. */
  backoffMs?: number;
  /** Longest single wait in ms (default 60,000: a whole rate-limit window, so Retry-After is honoured in full). */
  maxDelayMs?: number;
  /** Per-attempt timeout in ms (default 60,000); a timed-out attempt counts as a network failure. */
  timeoutMs?: number;
  /** Called (and awaited) before every wait: progress output, logging. */
  onWait?: (info: WaitInfo) => void | Promise<void>;
}

// upsertMany.
/** One item's result, at its position in the array given to `upsertMany`. */
export type ItemResult = ItemSuccess | ItemFailure;

export interface ItemSuccess {
  ok: true;
  /** Position in the array given to `upsertMany`. */
  index: number;
  externalReference: string;
  outcome: UpsertOutcome;
  /** null in a dry run for a listing that would be created (it has no id until written). */
  listingId: string | null;
  status: string;
  /** For `superseded`: the index (in the original input) of the later item that won. */
  supersededBy?: number;
}

export interface ItemFailure {
  ok: false;
  /** Position in the array given to `upsertMany`. */
  index: number;
  /** As given in the item (absent when the item had none). */
  externalReference?: string;
  /** e.g. VALIDATION_FAILED, PROFILE_FORBIDDEN, INVALID_REFERENCE, PAYLOAD_TOO_LARGE. */
  code: string;
  message: string;
  /** HTTP status for this item (422 for validation, 403 for a dealer out of scope, ...). */
  status: number;
  /** Every failing field, for validation failures. */
  issues?: Issue[];
}

/** Handed to `onBatch` after each batch. */
export interface BatchReport {
  /** 0-based number of this batch. */
  batch: number;
  /** Batches in the whole run. */
  batches: number;
  /** Indices (in the original input) of the items of this batch, in order. */
  indices: number[];
  /** One result per index, same order as `indices`. */
  results: ItemResult[];
  /** X-Request-Id of the request(s) that carried the batch (more than one when it was split after a 413). */
  requestIds: string[];
  dryRun: boolean;
}

export interface UpsertReport {
  /** One result per input item, `items[i].index === i`. */
  items: ItemResult[];
  created: number;
  updated: number;
  unchanged: number;
  superseded: number;
  failed: number;
  batches: number;
  dryRun: boolean;
}

export interface UpsertManyOptions {
  /** Validate everything, write nothing (`?dryRun=true`): the report says what would happen. */
  dryRun?: boolean;
  /** Items per request, 1 to 100 (default 100, the service's maximum). */
  batchSize?: number;
  /** Called and awaited after each batch, before the next is sent: persist resume state here. */
  onBatch?: (batch: BatchReport) => void | Promise<void>;
  /** Stops the run: the current request is aborted and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Retries per batch request (default: the client's `retries`). */
  maxRetries?: number;
  /** Overrides the client's `onWait` for this run. */
  onWait?: (info: WaitInfo) => void | Promise<void>;
}

/** `listings.iterate()`: the listings one by one, and the cursor to resume from. */
export interface ListingIterator extends AsyncIterable<Listing> {
  /**
   * The resume point: every listing before it has been yielded. It moves when the iteration has
   * passed the last listing of a page (so a consumer that stops mid-page re-reads that page on
   * resume, never skips it). Store it with your data; `iterate({ ...sameFilters, cursor })` resumes.
   * `undefined` until the first page has been consumed (unless a cursor was given).
   */
  readonly cursor: string | undefined;
  /** Page by page instead: each page with the cursor to store together with its listings. */
  pages(): AsyncIterable<{ data: Listing[]; cursor: string | undefined; hasMore: boolean }>;
}

/** What `createClient` returns. Every method throws a `ForecourtError` for an error answer. */
export interface ForecourtClient {
  /**
   * Which data this client works on, from its secret's prefix (no request made): `test` for a test
   * secret (`fc_test_…`: your own test data only, every answer carries `Forecourt-Mode: test`),
   * `live` for a live one (`fc_…`). Going live changes only the secret.
   */
  readonly mode: Mode;
  listings: {
    /** GET /listings: one page. */
    list(query?: ListingQuery, options?: CallOptions): Promise<ListingPage>;
    /** GET /listings/{id}, by the service's listing UUID. */
    get(id: string, options?: CallOptions): Promise<Listing>;
    /** GET /listings/{id} with the listing's ETag, for `ifMatch` on a later write. */
    getWithEtag(id: string, options?: CallOptions): Promise<{ listing: Listing; etag: string }>;
    /**
     * PUT /listings/{externalReference}: create or replace your listing. With `ifMatch`, only that
     * version is replaced (ForecourtError 412 PRECONDITION_FAILED otherwise; '*': only if it exists).
     */
    put<Dry extends boolean | undefined = undefined>(
      externalReference: string,
      listing: ListingInput,
      options?: DryRunOptions<Dry>,
    ): Promise<Versioned<WriteAnswer<Dry>>>;
    /**
     * PATCH /listings/{externalReference} (JSON Merge Patch): only the fields named change, null
     * clears one; 404 for a reference you do not have (a patch never creates).
     */
    patch<Dry extends boolean | undefined = undefined>(
      externalReference: string,
      patch: ListingPatch,
      options?: DryRunOptions<Dry>,
    ): Promise<Versioned<WriteAnswer<Dry>>>;
    /** POST /listings/{externalReference}/status. */
    setStatus<Dry extends boolean | undefined = undefined>(
      externalReference: string,
      status: ListingStatus,
      options?: DryRunOptions<Dry>,
    ): Promise<Versioned<StatusAnswer<Dry>>>;
    /** DELETE /listings/{externalReference}: status sold (idempotent). */
    markSold<Dry extends boolean | undefined = undefined>(
      externalReference: string,
      options?: DryRunOptions<Dry>,
    ): Promise<Versioned<StatusAnswer<Dry>>>;
    /** The same as markSold: DELETE /listings/{externalReference}. */
    remove<Dry extends boolean | undefined = undefined>(
      externalReference: string,
      options?: DryRunOptions<Dry>,
    ): Promise<Versioned<StatusAnswer<Dry>>>;
    /** POST /listings/bulk-upsert: one request, 1 to 100 items, the service's answer as is. */
    bulkUpsert(items: ListingInput[], options?: CallOptions & { dryRun?: boolean }): Promise<BulkResult>;
    /** Every listing matching `query`, following cursors to the end; resumable (see ListingIterator). */
    iterate(query?: IterateQuery & { cursor?: string }, options?: CallOptions): ListingIterator;
    /** Any number of listings in batches of up to 100, sent one after another, with a per-item report. */
    upsertMany(items: readonly ListingInput[], options?: UpsertManyOptions): Promise<UpsertReport>;
  };
  locations: {
    /** GET /locations. */
    list(query?: LocationQuery, options?: CallOptions): Promise<LocationList>;
    /**
     * One location by id. The API has no GET /locations/{id}: this reads GET /locations (every
     * location in scope) and picks it; 404 NOT_FOUND when it is not in your scope.
     */
    get(id: string, options?: CallOptions): Promise<Location>;
    /** GET /locations/{id}/listings: one page. */
    listings(id: string, query?: LocationListingsQuery, options?: CallOptions): Promise<LocationListingPage>;
  };
  reference: {
    /** GET /reference/enums: allowed values and aliases of every enumerated field. */
    enums(options?: CallOptions): Promise<Enums>;
  };
  /** /webhooks (needs the scopes manage:webhooks and read:listings); see docs/webhooks.md. */
  webhooks: {
    /** POST /webhooks: the answer holds the signing secret, shown only now. */
    create(endpoint: WebhookInput, options?: CallOptions): Promise<CreatedWebhookEndpoint>;
    list(options?: CallOptions): Promise<WebhookEndpoint[]>;
    get(id: string, options?: CallOptions): Promise<WebhookEndpoint>;
    /** PATCH /webhooks/{id}: url, description, filter, enabled. */
    update(id: string, change: WebhookChange, options?: CallOptions): Promise<WebhookEndpoint>;
    /** DELETE /webhooks/{id}. */
    remove(id: string, options?: CallOptions): Promise<void>;
    /** A new secret; the previous one keeps signing beside it for 24 hours. */
    rotateSecret(id: string, options?: CallOptions): Promise<RotatedWebhookSecret>;
    /** A signed ping now, or with `{ type }` a sample of that event type; answers with the attempt. */
    test(id: string, query?: WebhookTestQuery, options?: CallOptions): Promise<WebhookDelivery>;
    /** Starts a disabled endpoint from where it stopped, or (with a cursor) replays from there. */
    resume(id: string, resume?: { cursor?: string }, options?: CallOptions): Promise<WebhookEndpoint>;
    /** One page of the delivery log, newest first. */
    deliveries(id: string, query?: WebhookDeliveryQuery, options?: CallOptions): Promise<WebhookDeliveryPage>;
    /** GET /events: the events endpoints subscribe to, read without one (what `forecourt listen` forwards). */
    events(query?: EventQuery, options?: CallOptions): Promise<EventPage>;
  };
  /** /requests: your failed requests, kept for days (needs read:listings or write:listings). */
  requests: {
    /** One page, newest first; filter by status (429, 4xx), code and since. */
    list(query?: RequestRecordQuery, options?: CallOptions): Promise<RequestRecordPage>;
    /** A failed request by its request id (ForecourtError 404 when none failed with that id). */
    get(requestId: string, options?: CallOptions): Promise<RequestRecord>;
  };
}
