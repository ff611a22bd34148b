import type { ExistingListing } from '../../store/listings/writes.js';
import { matchEnum } from '../enums.js';
import type { Issue } from '../errors.js';
import { messages } from '../messages.js';
import type { Status } from './input.js';

/**
 * The rules of a listing that span fields and need the stored listing: which dealer it belongs to
 * and whether it needs a price. They are checked for every item, also for one whose fields failed
 * validation, so a partner learns every problem of an item in one answer (docs/contract.md#validation).
 */

/** What an item says about the fields these rules read, valid or not. */
interface CrossFieldInput {
  /** The status the item sends; undefined when it sends none (or none that is valid). */
  status: Status | undefined;
  /** Whether the item names a dealer (dealerProfileId or dealerLocationCode). */
  namesDealer: boolean;
  /** Whether the item sends a price (a valid one, or an invalid one already reported). */
  hasPrice: boolean;
}

/** The status a write will leave the listing in: the one sent, else the stored one, else active. */
export function resultingStatus(sent: Status | undefined, current: ExistingListing | undefined): Status {
  return sent ?? (current?.status as Status | undefined) ?? 'active';
}

export function crossFieldIssues(
  item: CrossFieldInput,
  current: ExistingListing | undefined,
  defaultDealer: string | undefined,
): Issue[] {
  const issues: Issue[] = [];
  if (!item.namesDealer && !current && !defaultDealer) {
    issues.push({
      path: 'dealerProfileId',
      message:
        'is required for a new listing: send dealerProfileId or dealerLocationCode (this secret has no single root profile to default to)',
      code: 'required',
    });
  }
  const status = resultingStatus(item.status, current);
  if ((status === 'active' || status === 'pending') && !item.hasPrice) issues.push(priceIssue(status));
  return issues;
}

/** A listing on offer (active or pending) has a price: docs/contract.md#price-rule. */
export const priceIssue = (status: Status): Issue => ({
  path: 'price',
  message: messages.priceRequired(status),
  code: 'required',
});

/** The same facts read from a body that failed validation: only what can be told for sure. */
export function crossFieldInputOfRaw(body: Record<string, unknown>): CrossFieldInput {
  const given = (name: string) => body[name] !== undefined && body[name] !== null && body[name] !== '';
  const status = typeof body.status === 'string' ? matchEnum('status', body.status) : undefined;
  return {
    status: status as Status | undefined,
    namesDealer: given('dealerProfileId') || given('dealerLocationCode'),
    // An invalid price is already an issue of its own; only a missing one is this rule's business.
    hasPrice: given('price'),
  };
}
