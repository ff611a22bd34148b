import { DbError } from '../../../store/errors.js';
import { ownerOf } from '../../../store/listings/mode.js';
import type { Partner } from '../../access.js';
import { inScope } from '../../access.js';
import { problem } from '../../errors.js';
import { ifMatchHolds, preconditionFailed } from '../../etag.js';
import { messages } from '../../messages.js';
import { priceIssue } from '../checks.js';
import type { Status } from '../input.js';
import { type StatusResult, validationFailed } from '../items.js';
import type { ListingWriteDeps } from './deps.js';
import { recordReadinessChanges } from './readiness-events.js';
import { withWriteRetry } from './retry.js';
import { readVersion, versionOf } from './version.js';

/** A dry run's answer, carried out of the transaction it rolls back. */
class DryRun extends Error {
  constructor(readonly answer: StatusResult & { etag: string }) {
    super('dry run');
  }
}

/** A listing on offer (active or pending) has a price: docs/contract.md#price-rule. */
const priceRequired = (status: Status) => validationFailed([priceIssue(status)]);

/** POST /listings/{ref}/status and DELETE (status sold): one listing of this partner, by reference. */
export async function changeStatus(
  deps: ListingWriteDeps,
  partner: Partner,
  reference: string,
  status: Status,
  options: { ifMatch?: string | undefined; dryRun?: boolean } = {},
): Promise<StatusResult & { etag: string }> {
  const attempt = () =>
    withWriteRetry(() =>
      deps.db.transaction(
        async (tx) => {
          const [current] = await deps.store.lockExisting(ownerOf(partner), [reference], tx);
          if (!current) throw problem('NOT_FOUND', messages.noListingWithReference(reference));
          if (!inScope(partner.access, current.dealerProfileId)) {
            throw problem(
              'PROFILE_FORBIDDEN',
              messages.listingDealerNotInScope(reference, current.dealerProfileId),
            );
          }
          // Under the row lock taken above: the version compared is the version changed. A dry run
          // answers with the version that stays: read before the change it rolls back.
          const before =
            options.dryRun || (options.ifMatch !== undefined && options.ifMatch.trim() !== '')
              ? await readVersion(deps, ownerOf(partner), reference, tx)
              : undefined;
          if (!ifMatchHolds(options.ifMatch, before?.etag)) throw preconditionFailed(reference, before?.etag);
          // The change and its status history in one statement, which also returns the listing's
          // new version (or, unchanged, its current one) for the answer's ETag.
          const { written: changed, version } = await deps.store
            .setStatus(ownerOf(partner), reference, status, tx, {
              version: options.dryRun ? undefined : deps.view,
            })
            .catch((error: unknown) => {
              // Fix (model tests): a listing without a price moved to active or pending broke the
              // table's check and answered 500; the rule is a validation failure like on PUT.
              if (error instanceof DbError && error.failure === 'price-when-listed')
                throw priceRequired(status);
              throw error;
            });
          // Active or not is part of readiness: its event, when it changed, under the same lock.
          if (changed)
            await recordReadinessChanges(tx, [
              { listingId: current.id, from: current.readiness, to: changed.readiness },
            ]);
          const answer = { listingId: current.id, externalReference: reference, status };
          if (options.dryRun) {
            // Done, then rolled back: the answer says what would change, with the version that stays.
            throw new DryRun({
              ...answer,
              outcome: changed ? 'would_update' : 'would_be_unchanged',
              dryRun: true,
              etag: before!.etag,
            });
          }
          return {
            ...answer,
            outcome: changed ? 'updated' : 'unchanged',
            etag: versionOf(version!).etag,
          } as const;
        },
        // Plans made once: a write's statements are large, and their plans do not depend on the values.
        { maxMs: deps.writeTimeoutMs, genericPlans: true },
      ),
    );
  try {
    const result = await attempt();
    deps.syncHorizon.forget();
    return result;
  } catch (error) {
    if (error instanceof DryRun) return error.answer;
    throw error;
  }
}
