import { z } from 'zod';
import { C1_CODE, c1Message, isStorableText, STORABLE_MESSAGE as STORABLE } from '../text.js';

/**
 * Field types of the admin API's bodies. Operators paste names and metadata from other systems;
 * what PostgreSQL cannot store (U+0000, unpaired surrogates) or what would make every later read
 * of a dealer heavy (deep or huge metadata) is refused with the rule, never a 500.
 */

/** Optional text of at most `max` characters; empty clears. */
export const adminText = (max: number) =>
  z.string().trim().max(max).refine(isStorableText, STORABLE).nullable().optional();

/** A required name. */
export const adminName = (max: number) => z.string().trim().min(1).max(max).refine(isStorableText, STORABLE);

/**
 * The C1 rule of a dealer's text (src/domain/text.ts, docs/contract.md#text), checked on the text
 * as sent (before trimming), so the position it names is the sent text's.
 */
const noC1 = (value: string, ctx: z.RefinementCtx) => {
  const message = c1Message(value);
  if (message) ctx.addIssue({ code: 'custom', message, params: { code: C1_CODE } });
};

/** A dealer's optional text: adminText, and no C1 control character. */
export const dealerText = (max: number) =>
  z.string().superRefine(noC1).trim().max(max).refine(isStorableText, STORABLE).nullable().optional();

/** A dealer's required name: adminName, and no C1 control character. */
export const dealerName = (max: number) =>
  z.string().superRefine(noC1).trim().min(1).max(max).refine(isStorableText, STORABLE);

const METADATA_MAX_DEPTH = 5;
const METADATA_MAX_BYTES = 16 * 1024;

/**
 * A dealer's free-form metadata: a JSON object of at most METADATA_MAX_DEPTH levels and
 * METADATA_MAX_BYTES serialized, keys and strings storable. Walked without recursion, so a body
 * nested 10,000 deep is refused, not a stack overflow.
 */
export const metadataField = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problem = metadataProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .optional();

function metadataProblem(root: Record<string, unknown>): string | undefined {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string' && !isStorableText(value)) return `${STORABLE} (in a value)`;
    // A number JSON cannot keep as sent (1e999 became null, 12345678901234567890 lost its last
    // digits) is refused, not stored changed (found 2026-11-30).
    if (
      typeof value === 'number' &&
      (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
    )
      return `numbers must be finite and whole ones within ±${Number.MAX_SAFE_INTEGER} (send larger ones as strings)`;
    if (value === null || typeof value !== 'object') continue;
    if (depth > METADATA_MAX_DEPTH) return `must be nested at most ${METADATA_MAX_DEPTH} levels deep`;
    for (const [key, child] of Object.entries(value)) {
      if (!isStorableText(key)) return `${STORABLE} (in a key)`;
      stack.push([child, depth + 1]);
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(root));
  if (bytes > METADATA_MAX_BYTES)
    return `must be at most ${METADATA_MAX_BYTES} bytes as JSON (this is ${bytes})`;
  return undefined;
}
