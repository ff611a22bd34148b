import { DbError } from '../../store/errors.js';
import type { Partner } from '../access.js';
import { inScope } from '../access.js';
import { problem } from '../errors.js';
import { priceIssue } from '../listing-checks.js';
import type { Status } from '../listing-input.js';
import { validationFailed } from '../listing-items.js';
import type { ListingWriteDeps } from './deps.js';
import { withWriteRetry } from './retry.js';

/** A listing on offer (active or pending) has a price: decisions.md. */
const priceRequired = (status: Status) => validationFailed([priceIssue(status)]);

/** POST /listings/{ref}/status and DELETE (status sold): one listing of this partner, by reference. */
export async function changeStatus(
  deps: ListingWriteDeps,
  partner: Partner,
  reference: string,
  status: Status,
): Promise<{ listingId: string; externalReference: string; status: string }> {
  const result = await withWriteRetry(() =>
    deps.db.transaction(
      async (tx) => {
        const [current] = await deps.store.lockExisting(partner.id, [reference], tx);
        if (!current)
          throw problem('NOT_FOUND', `This partner has no listing with externalReference "${reference}".`);
        if (!inScope(partner.access, current.dealerProfileId)) {
          throw problem(
            'PROFILE_FORBIDDEN',
            `Listing "${reference}" belongs to dealer profile ${current.dealerProfileId}, which is not in this API secret's access scope.`,
          );
        }
        const changed = await deps.store
          .setStatus(partner.id, reference, status, tx)
          .catch((error: unknown) => {
            // Fix (model tests): a listing without a price moved to active or pending broke the
            // table's check and answered 500; the rule is a validation failure like on PUT.
            if (error instanceof DbError && error.failure === 'price-when-listed')
              throw priceRequired(status);
            throw error;
          });
        if (changed) await deps.store.recordHistory([changed], tx);
        return { listingId: current.id, externalReference: reference, status };
      },
      { maxMs: deps.writeTimeoutMs },
    ),
  );
  deps.syncHorizon.forget();
  return result;
}
