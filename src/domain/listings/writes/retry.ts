import { DbError } from '../../../store/errors.js';
import { problem } from '../../errors.js';
import { messages } from '../../messages.js';

/** A reference of the batch was created by another transaction after we looked it up. */
export class Raced extends Error {
  constructor() {
    super('a reference of the batch was created concurrently');
  }
}

/**
 * Two writers locking overlapping rows can still deadlock in rare orders; PostgreSQL picks a victim, we retry it.
 * A batch that raced another writer's creation is retried too: each retry knows at least one more
 * of its references (listings are never removed), so this ends within the batch's size (at most
 * 100 items, the bulk limit).
 */
export async function withWriteRetry<T>(fn: () => Promise<T>): Promise<T> {
  let deadlocks = 0;
  let races = 0;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof Raced) {
        if (++races <= 100) continue;
        // Unreachable by the argument above; should it happen, the client may simply retry.
        throw problem('SERVICE_UNAVAILABLE', messages.conflictingWrite());
      }
      const retryable = error instanceof DbError && error.failure === 'retryable';
      if (!retryable || ++deadlocks >= 3) throw error;
    }
  }
}
