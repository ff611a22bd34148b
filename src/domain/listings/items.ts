import { z } from 'zod';
import { ownerOf } from '../../store/listings/mode.js';
import type { ListingWriteStore } from '../../store/listings/writes.js';
import type { Partner } from '../access.js';
import {
  type Issue,
  issuesPart,
  type ProblemCode,
  type ProblemError,
  problem,
  zodIssues,
} from '../errors.js';
import { messages } from '../messages.js';
import { c1Issues } from '../text.js';
import { expandUnrecognized } from '../unknown-keys.js';
import { crossFieldInputOfRaw, crossFieldIssues } from './checks.js';
import {
  isValidReference,
  type ListingWrite,
  type listingBodySchema,
  READ_ONLY_FIELDS,
  referenceRule,
  toListingWrite,
} from './input.js';

/**
 * The items of a write (a PUT body, or each bulk item) before anything is stored: their results
 * and errors, and the validation that turns a raw item into a write or into every issue it has.
 */

/**
 * What a write did to a listing, or, in a dry run, what it would do (issue 41: a dry run answered
 * `created` with the id of a listing that never existed). `superseded` is the same in both: an
 * earlier item of the request whose reference comes again later.
 */
export const WRITTEN_OUTCOMES = ['created', 'updated', 'unchanged', 'superseded'] as const;
export const DRY_RUN_OUTCOMES = ['would_create', 'would_update', 'would_be_unchanged'] as const;
const outcomeSchema = z.enum([...WRITTEN_OUTCOMES, ...DRY_RUN_OUTCOMES]);
export type Outcome = z.infer<typeof outcomeSchema>;

/** A write's outcome as its dry run says it: what would happen, nothing having happened. */
export function dryRunOutcome(outcome: Outcome): Outcome {
  switch (outcome) {
    case 'created':
      return 'would_create';
    case 'updated':
      return 'would_update';
    case 'unchanged':
      return 'would_be_unchanged';
    default:
      return outcome;
  }
}

const issueSchema = z.object({ path: z.string(), message: z.string(), code: z.string() });

/** `dryRun: true` on an answer of a dry run (absent otherwise): nothing was written. */
const dryRunFlag = z
  .literal(true)
  .optional()
  .describe('Present (true) only on the answer of a dry run (`?dryRun=true`): nothing was written.');

/** What a write answers for one listing (PUT, PATCH, and each bulk result without its index). */
export const writeResultSchema = z.object({
  listingId: z
    .string()
    .nullable()
    .describe(
      "The listing's id; null only in a dry run that would create the listing (it has no id until it is written).",
    ),
  externalReference: z.string(),
  status: z.string(),
  created: z.boolean().describe('Whether this write created the listing: always false in a dry run.'),
  outcome: outcomeSchema.describe(
    'created, updated, unchanged (the listing already had this content; its updatedAt did not move), superseded (bulk: a later item of the request has the same reference). A dry run says what it would do: would_create, would_update, would_be_unchanged (or superseded).',
  ),
  dryRun: dryRunFlag,
});

/** What a status change or DELETE answers. */
export const statusResultSchema = z.object({
  listingId: z.string(),
  externalReference: z.string(),
  status: z.string(),
  outcome: z
    .enum(['updated', 'unchanged', 'would_update', 'would_be_unchanged'])
    .describe(
      'updated: the status changed; unchanged: the listing already had it. A dry run: would_update, would_be_unchanged.',
    ),
  dryRun: dryRunFlag,
});
export type StatusResult = z.infer<typeof statusResultSchema>;

/** One successful item of a bulk upsert, at its index in the request. */
export const itemResultSchema = writeResultSchema.extend({
  index: z.number().int(),
  /** For an item whose reference comes again later in the same request: the index that won. */
  supersededBy: z.number().int().optional(),
});
export type ItemResult = z.infer<typeof itemResultSchema>;

/** One failed item of a bulk upsert: the error a PUT of it alone would have answered. */
export const itemErrorSchema = z.object({
  index: z.number().int(),
  externalReference: z.string().optional(),
  code: z.string(),
  message: z.string(),
  status: z.number().int(),
  issues: z.array(issueSchema).optional(),
  issueCount: z
    .number()
    .int()
    .optional()
    .describe('Present when the item had more issues than the 100 listed: how many there were.'),
});
export type ItemError = z.infer<typeof itemErrorSchema> & { code: ProblemCode };

export interface RawItem {
  index: number;
  reference: unknown;
  body: unknown;
}

export interface Prepared {
  index: number;
  reference: string;
  write: ListingWrite;
}

export function itemError(index: number, reference: unknown, problem: ProblemError): ItemError {
  return {
    index,
    ...(typeof reference === 'string' ? { externalReference: reference } : {}),
    code: problem.code,
    message: problem.message,
    status: problem.status,
    ...issuesPart(problem.issues),
  };
}

export const validationFailed = (issues: Issue[]) =>
  problem('VALIDATION_FAILED', messages.invalidListing(issues), issues);

/** An item whose fields failed validation: kept to add its cross-field issues before answering. */
export interface Invalid {
  index: number;
  reference: string;
  body: Record<string, unknown>;
  issues: Issue[];
}

/**
 * Validates one item: its reference, that it is an object, and every field. Unknown field names
 * are issues too (under replace semantics a misspelt field would clear the real one), each
 * naming the closest known field.
 */
export type ListingBodySchema = ReturnType<typeof listingBodySchema>;

export interface PrepareOptions {
  /**
   * The top-level fields whose text the C1 rule is checked in; every field when absent. A PATCH
   * names the fields it sets: a C1 character stored before the rule, in a field the patch does
   * not touch, is not the partner's text in this request and does not refuse it.
   */
  c1Fields?: ReadonlySet<string>;
}

export function prepare(
  schema: ListingBodySchema,
  item: RawItem,
  options: PrepareOptions = {},
): Prepared | Invalid | ProblemError {
  if (!isValidReference(item.reference)) {
    return problem(
      'INVALID_REFERENCE',
      item.reference === undefined || item.reference === null || item.reference === ''
        ? messages.referenceRequired()
        : messages.invalidReference(referenceRule),
    );
  }
  if (item.body === null || typeof item.body !== 'object' || Array.isArray(item.body)) {
    return problem('INVALID_BODY', messages.itemNotObject());
  }
  const body = item.body as Record<string, unknown>;
  const parsed = schema.safeParse(body);
  const textIssues = [
    ...referenceIssues(body, item.reference),
    ...c1IssuesOf(schema, body, options.c1Fields),
  ];
  if (!parsed.success || textIssues.length > 0) {
    const issues = parsed.success ? [] : expandUnrecognized(parsed.error.issues, schema, 'field');
    return {
      index: item.index,
      reference: item.reference,
      body,
      issues: [...zodIssues({ issues } as z.ZodError), ...textIssues],
    };
  }
  return { index: item.index, reference: item.reference, write: toListingWrite(parsed.data) };
}

/** The names a body may give its reference by. */
export const REFERENCE_NAMES = ['externalReference', 'external_reference'] as const;

/**
 * A body may carry the listing's reference (a listing read back and sent back does), but only as
 * the reference the write addresses: the path's (PUT, PATCH), or the item's first name of it
 * (bulk). Another value was ignored without a word: a partner that meant to rename a listing by
 * PATCH was told `unchanged`, and a bulk item with both names written differently wrote one of
 * them. A reference cannot change: it is refused at the name that differs.
 */
export function referenceIssues(body: Record<string, unknown>, reference: string): Issue[] {
  return REFERENCE_NAMES.filter(
    (name) => Object.hasOwn(body, name) && body[name] !== undefined && body[name] !== reference,
  ).map((path) => ({ path, code: 'reference_mismatch', message: messages.referenceMismatch(reference) }));
}

const NOT_TEXT_OF_THE_LISTING = new Set<string>([
  ...READ_ONLY_FIELDS,
  'externalReference',
  'external_reference',
]);

/**
 * The C1 rule (src/domain/text.ts): every text of the listing's own fields, at any depth
 * (`features.0.name`, `location.city`), naming the field and the character's position in the text
 * as sent. Read-only fields are ignored by a write, unknown names are issues of their own, and the
 * reference has its rule (INVALID_REFERENCE), so none of them is looked into.
 */
function c1IssuesOf(
  schema: ListingBodySchema,
  body: Record<string, unknown>,
  only?: ReadonlySet<string>,
): Issue[] {
  const issues: Issue[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (!Object.hasOwn(schema.shape, name) || NOT_TEXT_OF_THE_LISTING.has(name)) continue;
    if (only && !only.has(name)) continue;
    issues.push(...c1Issues(name === 'images' ? withoutChecks(value) : value, name));
  }
  return issues;
}

/**
 * An image's `check` is read-only (accepted and ignored, so a listing read back can be sent
 * back): not the listing's text. Its content type and message come from the image's server,
 * which may send C1 characters; a round trip must not be refused for them.
 */
function withoutChecks(images: unknown): unknown {
  if (!Array.isArray(images)) return images;
  return images.map((image) =>
    image !== null && typeof image === 'object' && !Array.isArray(image)
      ? { ...image, check: undefined }
      : image,
  );
}

/**
 * Items that failed validation still get the rules that need the stored listing (a missing
 * price, a missing dealer), read in one query for all of them: every problem in one answer.
 */
export async function refuseInvalid(
  store: Pick<ListingWriteStore, 'findExisting'>,
  partner: Partner,
  invalid: readonly Invalid[],
  errors: ItemError[],
): Promise<void> {
  if (invalid.length === 0) return;
  const stored = new Map(
    (
      await store.findExisting(
        ownerOf(partner),
        invalid.map((i) => i.reference),
      )
    ).map((e) => [e.reference, e]),
  );
  for (const item of invalid) {
    const known = new Set(item.issues.map((i) => i.path));
    const more = crossFieldIssues(
      crossFieldInputOfRaw(item.body),
      stored.get(item.reference),
      defaultDealerOf(partner),
    ).filter((i) => !known.has(i.path));
    errors.push(itemError(item.index, item.reference, validationFailed([...item.issues, ...more])));
  }
}

/** The dealer of a new listing that names none: the partner's only root profile, if it has one. */
export function defaultDealerOf(partner: Partner): string | undefined {
  return partner.access.scope === 'restricted' && partner.access.rootProfileIds.length === 1
    ? partner.access.rootProfileIds[0]
    : undefined;
}
