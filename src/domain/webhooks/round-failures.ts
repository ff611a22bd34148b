import { DbError } from '../../store/errors.js';
import { keepable } from '../text.js';

/** A round that failed (the service could not record it) waits this long, doubling per failure, up to the maximum. */
const ROUND_BACKOFF_MS = 1000;
export const MAX_ROUND_BACKOFF_MS = 5 * 60_000;
/** Rounds of one endpoint in a row whose data the database refused (not an outage): then it is set aside (disabled, with the reason). */
export const SET_ASIDE_AFTER = 5;

/** An endpoint's rounds in a row that failed, of them the refusals of its data in a row, and the cause last logged. */
export interface RoundFailures {
  rounds: number;
  refusals: number;
  cause: string;
}

/**
 * What a failed delivery round means for its endpoint. It waits, longer each time, so one
 * endpoint never loops and others keep their turn. Only the database refusing the round's data
 * (SQLSTATE 22, 23) counts toward setting it aside, after SET_ASIDE_AFTER in a row: an outage, a
 * deadlock or a missing table only makes it wait, and breaks a run of refusals (an outage must
 * never disable an endpoint). A cause is logged when it changes, not at every round.
 */
export function afterRoundFailure(
  before: RoundFailures | undefined,
  error: unknown,
): { state: RoundFailures; waitMs: number; log: boolean; setAside: string | null } {
  const refused = error instanceof DbError && error.refusedData;
  const cause = error instanceof DbError ? `${error.failure}:${error.sqlState ?? ''}` : String(error);
  const rounds = (before?.rounds ?? 0) + 1;
  const refusals = refused ? (before?.refusals ?? 0) + 1 : 0;
  return {
    state: { rounds, refusals, cause },
    waitMs: Math.min(MAX_ROUND_BACKOFF_MS, ROUND_BACKOFF_MS * 2 ** (rounds - 1)),
    log: before?.cause !== cause,
    setAside:
      refusals >= SET_ASIDE_AFTER
        ? `the service could not record this endpoint's deliveries ${refusals} times in a row (${keepable((error as Error).message, 200)}); resume it to try again`
        : null,
  };
}
