import { ownerOf } from '../../../store/listings/mode.js';
import type { Partner } from '../../access.js';
import { inScope } from '../../access.js';
import { ProblemError, problem } from '../../errors.js';
import { ifMatchHolds, preconditionFailed } from '../../etag.js';
import { applyMergePatch } from '../../merge-patch.js';
import { messages } from '../../messages.js';
import { unknownNullIssues } from '../../unknown-keys.js';
import { crossFieldInputOfRaw, crossFieldIssues } from '../checks.js';
import {
  defaultDealerOf,
  dryRunOutcome,
  type ItemError,
  type ItemResult,
  prepare,
  REFERENCE_NAMES,
  referenceIssues,
  validationFailed,
} from '../items.js';
import { resolveDealers } from './dealers.js';
import type { ListingWriteDeps } from './deps.js';
import { withWriteRetry } from './retry.js';
import { addScopeIssues } from './scope-issues.js';
import { readVersion } from './version.js';
import { writeBatch } from './write-batch.js';

export interface PatchOptions {
  ifMatch?: string | undefined;
  /** Do everything, then roll it back: the answer says what the patch would do. */
  dryRun?: boolean;
}

/** A dry run's answer, carried out of the transaction it rolls back. */
class DryRun extends Error {
  constructor(readonly outcome: { result: ItemResult; etag: string }) {
    super('dry run');
  }
}

/**
 * Names of one field (../input.ts): a PUT validates each and takes the first given. The read
 * shape names the dealer by dealerProfileId, which wins over dealerLocationCode in a PUT.
 */
const SAME_FIELD = [
  ['historyReportUrl', 'historyReport', 'history_report_url', 'historyReportNumber'],
  ['dealerProfileId', 'dealerLocationCode'],
];
const LOCATION_FIELDS = ['postalCode', 'city', 'province', 'latitude', 'longitude'];

/**
 * The stored listing, as the body of a PUT that would write it again: the read shape's nested
 * location moved to the top level (one place for each field, so a patch can clear it).
 */
function baseBody(read: Record<string, unknown>): Record<string, unknown> {
  const { location, ...rest } = read;
  return { ...rest, ...(location && typeof location === 'object' ? location : {}) };
}

/**
 * The patch applied to the stored listing (RFC 7396). A patch may name a field by an alias or
 * through the nested location, as a PUT body may; the stored value under another name is removed
 * first, or it would win over the patch (the canonical name wins in a PUT) and the patch would be
 * ignored without a word. The patch's own names stay as sent, so each is validated as in a PUT.
 */
function applyPatch(read: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const target = baseBody(read);
  for (const names of SAME_FIELD) {
    if (names.some((name) => name in patch)) for (const name of names) delete target[name];
  }
  const location = patch.location;
  if (location === null) for (const name of LOCATION_FIELDS) delete target[name];
  else if (location && typeof location === 'object' && !Array.isArray(location)) {
    for (const name of Object.keys(location)) delete target[name];
  }
  return applyMergePatch(target, patch) as Record<string, unknown>;
}

/** A concurrent write changed the listing between reading it and locking it: start over. */
class Moved extends Error {}

/**
 * PATCH /listings/{ref}: the stored listing, with the merge patch applied, written like a PUT of
 * the result (the same validation, the same unchanged rule). The write happens only if the
 * listing is still the version the patch was applied to, compared under the row lock; when
 * another write came first, the patch is applied again to the new version (or answered 412 when
 * If-Match named the old one).
 */
export async function patchListing(
  deps: ListingWriteDeps,
  partner: Partner,
  reference: string,
  patch: Record<string, unknown>,
  options: PatchOptions,
): Promise<{ result: ItemResult; etag: string }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await patchOnce(deps, partner, reference, patch, options);
    } catch (error) {
      if (!(error instanceof Moved)) throw error;
      if (attempt >= 5) throw problem('SERVICE_UNAVAILABLE', messages.keptChanging());
      // Another writer came first: give it room before reading again (10, 20, 40 … ms, jittered).
      await new Promise((resolve) => setTimeout(resolve, (5 + Math.random() * 5) * 2 ** attempt));
    }
  }
}

async function patchOnce(
  deps: ListingWriteDeps,
  partner: Partner,
  reference: string,
  patch: Record<string, unknown>,
  options: PatchOptions,
): Promise<{ result: ItemResult; etag: string }> {
  const base = await readVersion(deps, ownerOf(partner), reference);
  // A patch never creates: there is nothing to apply it to.
  if (!base) throw problem('NOT_FOUND', messages.noListingWithReference(reference));
  if (!inScope(partner.access, base.dealerId)) {
    throw problem('PROFILE_FORBIDDEN', messages.listingDealerNotInScope(reference, base.dealerId));
  }
  if (!ifMatchHolds(options.ifMatch, base.etag)) throw preconditionFailed(reference, base.etag);

  const read = JSON.parse(base.json) as Record<string, unknown>;
  const body = applyPatch(read, patch);
  // The C1 rule looks only at the fields the patch sets (PrepareOptions.c1Fields).
  const prepared = prepare(
    deps.schema,
    { index: 0, reference, body },
    { c1Fields: new Set(Object.keys(patch)) },
  );
  if (prepared instanceof ProblemError) throw prepared;
  // A reference cleared by null is gone from the merged body: refused like one changed.
  const erased = [
    ...unknownNullIssues(patch, deps.schema),
    ...referenceIssues(
      Object.fromEntries(REFERENCE_NAMES.filter((n) => patch[n] === null).map((n) => [n, null])),
      reference,
    ),
  ];
  const current = {
    id: read.id as string,
    reference,
    dealerProfileId: base.dealerId,
    status: read.status as string,
  };
  if ('issues' in prepared || erased.length > 0) {
    const invalid =
      'issues' in prepared
        ? { ...prepared, issues: [...erased, ...prepared.issues] }
        : { index: 0, reference, body, issues: erased };
    await addScopeIssues(deps, partner, [invalid]);
    const known = new Set(invalid.issues.map((i) => i.path));
    const more = crossFieldIssues(crossFieldInputOfRaw(body), current, defaultDealerOf(partner)).filter(
      (i) => !known.has(i.path),
    );
    throw validationFailed([...invalid.issues, ...more]);
  }
  const errors: ItemError[] = [];
  const dealerOf = await resolveDealers(deps, partner, [prepared], errors);
  const refused = errors[0];
  if (refused) throw problem(refused.code, refused.message, refused.issues);

  try {
    const outcome = await withWriteRetry(() =>
      deps.db.transaction(
        async (tx) => {
          const locked = await deps.store.lockExisting(ownerOf(partner), [reference], tx);
          const now = await readVersion(deps, ownerOf(partner), reference, tx);
          // The comparison under the lock: the write applies only to the version patched above.
          if (now?.etag !== base.etag) throw new Moved();
          const local: typeof errors = [];
          const { results, versions } = await writeBatch(deps, partner, [prepared], dealerOf, local, tx, {
            locked,
            versions: !options.dryRun,
          });
          const failed = local[0];
          if (failed) throw problem(failed.code, failed.message, failed.issues);
          const result = results.get(reference)!;
          // A dry run rolls back, and answers with the version that stays.
          if (options.dryRun) {
            throw new DryRun({
              result: { ...result, outcome: dryRunOutcome(result.outcome), created: false, dryRun: true },
              etag: base.etag,
            });
          }
          // The version the write left, returned by its own statement.
          return { result, etag: versions.get(reference)!.etag };
        },
        // Plans made once: a write's statements are large, and their plans do not depend on the values.
        { maxMs: deps.writeTimeoutMs, genericPlans: true },
      ),
    );
    deps.syncHorizon.forget();
    return outcome;
  } catch (error) {
    if (error instanceof DryRun) return error.outcome;
    throw error;
  }
}
