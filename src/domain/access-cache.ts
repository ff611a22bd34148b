/**
 * What a partner's request needs before its work starts (the partner behind a secret, the dealers
 * under its roots, the dealer each listing names: domain/dealer-lookup.ts), kept in the instance
 * so a request does not ask the database for them each time: two statements of a list page's
 * five, one of a write's.
 *
 * Correctness rests on forgetting, never on time: every change to partners, secrets, the dealer
 * tree or a location code notifies every instance when it commits (migrations 009 and 035), and
 * the instance that made it forgets at once (before answering the operator). While notifications
 * may be missed (the listening connection is down) nothing is kept. A load that began before a
 * forget is not kept either (it may have read the old state). The TTL only bounds what a lost
 * notification could cost, in a failure the listener did not see.
 */
/** The notification channel the triggers of migrations 009 and 035 send on. */
export const ACCESS_CHANNEL = 'forecourt_access';

export interface AccessCache {
  /** The value kept under `key`, or `load`'s (kept when `keep` says so and nothing was forgotten meanwhile). */
  through<T>(key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T>;
  /**
   * The values of one `kind` kept under each key, and `load`'s for the keys not kept, asked for
   * in one call (a batch's dealers in one statement). What `load` finds is kept as `through`
   * keeps; a key it does not find is not (it is asked again next time). Each kind is kept and
   * bounded apart from the others and from `through`'s keys: a dealer tree of any size never
   * pushes partners' secrets out.
   */
  throughMany<T>(
    kind: string,
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
  // Each map's bound: partners' secrets and root sets are few; a kind of dealer key holds at most
  // one entry per profile. The bound is a guard, not a policy.
  const maxEntries = options.maxEntries ?? 100_000;
  type Entries = Map<string, { value: unknown; at: number }>;
  const entries: Entries = new Map();
  const kinds = new Map<string, Entries>();
  let generation = 0;
  let live = false;
  const forget = () => {
    generation++;
    entries.clear();
    kinds.clear();
  };
  const fresh = (map: Entries | undefined, key: string) => {
    const entry = map?.get(key);
    return entry && performance.now() - entry.at < ttlMs ? entry : undefined;
  };
  const keep = (map: Entries, key: string, value: unknown) => {
    if (map.size >= maxEntries) map.clear();
    map.set(key, { value, at: performance.now() });
  };
  return {
    async through<T>(key: string, load: () => Promise<T>, keepIf: (value: T) => boolean = () => true) {
      const entry = fresh(entries, key);
      if (entry) return entry.value as T;
      const before = generation;
      const value = await load();
      if (live && generation === before && keepIf(value)) keep(entries, key, value);
      return value;
    },
    async throughMany<T>(
      kind: string,
      keys: readonly string[],
      load: (missing: string[]) => Promise<Map<string, T>>,
    ) {
      const found = new Map<string, T>();
      const missing: string[] = [];
      for (const key of new Set(keys)) {
        const entry = fresh(kinds.get(kind), key);
        if (entry) found.set(key, entry.value as T);
        else missing.push(key);
      }
      if (missing.length === 0) return found;
      const before = generation;
      const loaded = await load(missing);
      const kept = live && generation === before;
      const map: Entries = kinds.get(kind) ?? new Map();
      if (kept) kinds.set(kind, map);
      for (const [key, value] of loaded) {
        found.set(key, value);
        if (kept) keep(map, key, value);
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
