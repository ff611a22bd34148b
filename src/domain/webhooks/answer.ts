import type { PostResult } from '../../outbound/webhook-post.js';
import { keepableOrNull } from '../text.js';

/** A receiver's answer is kept to its first kilobyte (the delivery log shows it). */
const KEEP_CHARS = 1024;

/**
 * A receiver's answer (and whatever an error quotes of it, a Location header say) as the delivery
 * log keeps it for people to read: U+0000 and unpaired surrogates replaced, so no answer can make
 * the log's write, and with it the acknowledgement, fail (a NUL in a text column is refused: a
 * receiver answering one got the same delivery 268 times in 3 s).
 */
export function keptAnswer(result: PostResult): PostResult {
  return {
    ...result,
    body: keepableOrNull(result.body, KEEP_CHARS),
    error: keepableOrNull(result.error),
  };
}
