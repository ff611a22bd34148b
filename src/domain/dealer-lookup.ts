import type { DealerStore } from '../store/dealers.js';
import type { AccessCache } from './access-cache.js';

/** Which dealers exist, by id and by location code: what a partner's request names. */
export interface DealerLookup {
  /** Which of these ids are dealer profiles. */
  existing(ids: readonly string[]): Promise<Set<string>>;
  /** The profile each location code names (case-insensitively), keyed by the lower-cased code. */
  idsByCodes(codes: readonly string[]): Promise<Map<string, string>>;
}

/**
 * The dealers that writes and lists name, kept in the instance's access cache: a PUT naming its
 * dealer by code spent one statement of its five on asking which profile that is (0.55 of 4.6 ms
 * on PostgreSQL, bench/results/2026-11-30-dealer-lookup.txt), for an answer that changes only
 * when an operator adds, removes or re-codes a profile. Each of those notifies every instance
 * (migrations 009 and 035), which then forgets. Only what exists is kept: a code or id that names
 * nothing is asked again each time, so a profile created a moment ago is found at once.
 */
export function dealerLookup(
  dealers: Pick<DealerStore, 'existing' | 'idsByCodes'>,
  cache: AccessCache,
): DealerLookup {
  return {
    async existing(ids) {
      const known = await cache.throughMany('dealer-id', ids, async (missing) => {
        const found = await dealers.existing(missing);
        return new Map([...found].map((id) => [id, true]));
      });
      return new Set(known.keys());
    },
    idsByCodes(codes) {
      // Keys are lower-cased as the callers look them up; the store's map is keyed by the
      // database's lower(), the same for the ASCII a code is made of (POST /dealers refuses else).
      return cache.throughMany(
        'dealer-code',
        codes.map((code) => code.toLowerCase()),
        (missing) => dealers.idsByCodes(missing),
      );
    },
  };
}
