/**
 * What a partner's request needs before its work starts (the partner behind a secret, the dealers
 * under its roots, the dealer each listing names: domain/dealer-lookup.ts), kept in the instance
 * so a request does not ask the database for them each time: two statements of a list page's
 * five, one of a write's.
 *
 * Correctness rests on forgetting, never on time: every change to partners, secrets or the dealer
 * tree notifies every instance when it commits (migration 009), and the instance that made it
 * forgets at once (before answering the operator). While notifications may be missed (the
 * listening connection is down) nothing is kept. A load that began before a forget is not kept
 * either (it may have read the old state). The TTL only bounds what a lost notification could
 * cost, in a failure the listener did not see.
 */
/** The notification channel the triggers of migration 009 send on. */
export const ACCESS_CHANNEL = 'forecourt_access';

export interface AccessCache {
  /** The value kept under `key`, or `load`'s (kept when `keep` says so and nothing was forgotten meanwhile). */
  through<T>(key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T>;
  /**
   * The values kept under `prefix` + each key, and `load`'s for the keys not kept, asked for in
   * one call (a batch's dealers in one statement). What `load` finds is kept as `through` keeps;
   * a key it does not find is not (it is asked again next time).
   */
  throughMany<T>(
    prefix: string,
    keys: readonly string[],
    load: (missing: string[]) => Promise<Map<string, T>>,
  ): Promise<Map<string, T>>;
  /** Forgets everything (a change to what partners may do was committed). */
  forget(): void;
  /** Whether changes are being heard; when not, nothing is kept. */
  setLive(live: boolean): void;
}

export function accessCache(options: { ttlMs?: number; maxEntries?: number } = {}): AccessCache {
  const ttlMs = options.ttlMs ?? 60_000;
  // Partners' secrets and root sets are few; dealers named by writes are up to every profile.
  const maxEntries = options.maxEntries ?? 100_000;
  const entries = new Map<string, { value: unknown; at: number }>();
  let generation = 0;
  let live = false;
  const forget = () => {
    generation++;
    entries.clear();
  };
  const fresh = (key: string) => {
    const entry = entries.get(key);
    return entry && performance.now() - entry.at < ttlMs ? entry : undefined;
  };
  const keep = (key: string, value: unknown) => {
    // Entries are partners' secrets, root sets and dealers' codes: bounded by what exists. The
    // bound is a guard, not a policy.
    if (entries.size >= maxEntries) entries.clear();
    entries.set(key, { value, at: performance.now() });
  };
  return {
    async through<T>(key: string, load: () => Promise<T>, keepIf: (value: T) => boolean = () => true) {
      const entry = fresh(key);
      if (entry) return entry.value as T;
      const before = generation;
      const value = await load();
      if (live && generation === before && keepIf(value)) keep(key, value);
      return value;
    },
    async throughMany<T>(
      prefix: string,
      keys: readonly string[],
      load: (missing: string[]) => Promise<Map<string, T>>,
    ) {
      const found = new Map<string, T>();
      const missing: string[] = [];
      for (const key of new Set(keys)) {
        const entry = fresh(prefix + key);
        if (entry) found.set(key, entry.value as T);
        else missing.push(key);
      }
      if (missing.length === 0) return found;
      const before = generation;
      const loaded = await load(missing);
      const kept = live && generation === before;
      for (const [key, value] of loaded) {
        found.set(key, value);
        if (kept) keep(prefix + key, value);
      }
      return found;
    },
    forget,
    setLive(value: boolean) {
      live = value;
      forget();
    },
  };
}
