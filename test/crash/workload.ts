import { EXT, type Reply } from '../helpers/app.js';

export { EXT };

/** Seeded PRNG (mulberry32): the same seed makes the same choices (timing still varies). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATUSES = ['active', 'pending', 'sold', 'draft'] as const;
type Status = (typeof STATUSES)[number];

/** The part of a listing each write sets and the read-back compares. */
export interface Content {
  title: string;
  /** A stamp unique to the write, so that every write is told apart from every other. */
  description: string;
  price: number;
  mileage: number;
  status: Status;
  dealerProfileId: string;
  images: string[];
}

interface Pending {
  content: Content;
  /** The request it travelled in: a bulk upsert is one transaction, all or nothing. */
  request: number;
}

interface RefState {
  ref: string;
  /** The last acknowledged state; null: never acknowledged. */
  acked: Content | null;
  listingId: string | null;
  /** A write sent without a 2xx answer: it may or may not have committed. Blocks new writes. */
  pending: Pending | null;
  busy: boolean;
}

export type Call = (method: string, urlPath: string, body?: unknown, signal?: AbortSignal) => Promise<Reply>;

export interface LoadStats {
  requests: number;
  acked: number;
  ackedItems: number;
  unanswered: number;
  /** Requests the client gave up on (it stopped waiting; the service carried on). */
  abandoned: number;
  /** Answers that were not 2xx, by status. */
  refused: Record<string, number>;
}

export interface VerifyStats {
  /** Listings read back and compared with what was acknowledged. */
  checked: number;
  /** Writes in flight at the crash found committed (whole) or absent. */
  inFlightApplied: number;
  inFlightLost: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A partner's client that remembers what the service acknowledged. Each reference has at most one
 * write in flight, so its acknowledged writes are ordered and the latest is what must be stored.
 */
export class Workload {
  readonly states = new Map<string, RefState>();
  private writeSeq = 0;
  private requestSeq = 0;
  private stopped = false;
  readonly failures: string[] = [];
  stats: LoadStats = { requests: 0, acked: 0, ackedItems: 0, unanswered: 0, abandoned: 0, refused: {} };
  /**
   * Share of writes the client stops waiting for after a few milliseconds: the service still
   * commits them, unanswered, so the read-back meets whole committed-but-unacknowledged bulks, not
   * only ones the crash cut off. Only where a crash comes before the next read-back: a request
   * still running on the service could otherwise commit after it.
   */
  abandonRate = 0;

  constructor(
    private readonly rng: () => number,
    /** The partner's one root profile (the default dealer) first, then two of its children. */
    private readonly dealers: string[],
    private readonly tag: string,
  ) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rng() * items.length)]!;
  }

  private idleKnown(): RefState[] {
    return [...this.states.values()].filter((s) => s.acked && !s.pending && !s.busy);
  }

  private newRef(): RefState {
    const state: RefState = {
      ref: `${this.tag}-${this.states.size + 1}`,
      acked: null,
      listingId: null,
      pending: null,
      busy: false,
    };
    this.states.set(state.ref, state);
    return state;
  }

  /** Takes n idle references, new ones with probability pNew (or when no known one is free). */
  private take(n: number, pNew: number): RefState[] {
    const known = this.idleKnown();
    const out: RefState[] = [];
    for (let i = 0; i < n; i++) {
      const state =
        this.rng() < pNew || known.length === 0
          ? this.newRef()
          : known.splice(Math.floor(this.rng() * known.length), 1)[0]!;
      state.busy = true;
      out.push(state);
    }
    return out;
  }

  /** A full body for PUT or a bulk item; status and dealer are sometimes left out (kept / default). */
  private body(state: RefState): { body: Record<string, unknown>; content: Content } {
    const seq = ++this.writeSeq;
    const status = this.rng() < 0.25 ? undefined : this.pick(STATUSES);
    const dealer = this.rng() < 0.3 ? undefined : this.pick(this.dealers);
    const images = Array.from(
      { length: Math.floor(this.rng() * 4) },
      (_, i) => `https://img.example/${state.ref}/${seq}/${i}.jpg`,
    );
    const content: Content = {
      title: `Crash car ${state.ref} #${seq}`,
      description: `write ${seq}`,
      price: (100_000 + Math.floor(this.rng() * 4_000_000)) / 100,
      mileage: Math.floor(this.rng() * 300_000),
      status: status ?? state.acked?.status ?? 'active',
      dealerProfileId: dealer ?? state.acked?.dealerProfileId ?? this.dealers[0]!,
      images,
    };
    const body: Record<string, unknown> = {
      title: content.title,
      description: content.description,
      price: content.price,
      mileage: content.mileage,
      brand: 'Skoda',
      model: 'Octavia',
      year: 2020,
      images,
      ...(status ? { status } : {}),
      ...(dealer ? { dealerProfileId: dealer } : {}),
    };
    return { body, content };
  }

  private fail(message: string): void {
    if (this.failures.length < 20) this.failures.push(message);
  }

  /** Sends one request; a 2xx reply is handed to `onAck`, anything else leaves the writes pending. */
  private async send(
    call: Call,
    method: string,
    urlPath: string,
    body: unknown,
    onAck: (reply: Reply) => void,
  ): Promise<boolean> {
    this.stats.requests++;
    const abandon = this.rng() < this.abandonRate;
    if (abandon) this.stats.abandoned++;
    let reply: Reply;
    try {
      reply = await call(
        method,
        urlPath,
        body,
        abandon ? AbortSignal.timeout(5 + Math.floor(this.rng() * 60)) : undefined,
      );
    } catch (error) {
      // Killed under us (or the connection refused): no answer, the write is in doubt.
      if ((error as Error).message.startsWith('Contract:')) this.fail((error as Error).message);
      this.stats.unanswered++;
      return false;
    }
    if (reply.status >= 200 && reply.status < 300) {
      this.stats.acked++;
      onAck(reply);
      return true;
    }
    this.stats.refused[reply.status] = (this.stats.refused[reply.status] ?? 0) + 1;
    if (reply.status === 500) this.fail(`${method} ${urlPath} → 500 ${reply.text.slice(0, 300)}`);
    return false;
  }

  private acknowledge(state: RefState, listingId: string, status: string): void {
    const pending = state.pending!;
    if (status !== pending.content.status)
      this.fail(`${state.ref}: acknowledged status ${status}, expected ${pending.content.status}`);
    if (state.listingId && state.listingId !== listingId)
      this.fail(`${state.ref}: listingId changed from ${state.listingId} to ${listingId}`);
    state.acked = pending.content;
    state.listingId = listingId;
    state.pending = null;
    this.stats.ackedItems++;
  }

  async bulk(call: Call): Promise<boolean> {
    const size = 20 + Math.floor(this.rng() * 81);
    const states = this.take(size, 0.35);
    const request = ++this.requestSeq;
    const items: Record<string, unknown>[] = [];
    // Now and then an item that must fail on its own (active without a price) and change nothing.
    const invalid = new Set<number>();
    states.forEach((state, index) => {
      if (state.acked && this.rng() < 0.05) {
        invalid.add(index);
        items.push({ externalReference: state.ref, title: 'no price', status: 'active' });
        return;
      }
      const { body, content } = this.body(state);
      state.pending = { content, request };
      items.push({ externalReference: state.ref, ...body });
    });
    const ok = await this.send(call, 'POST', `${EXT}/listings/bulk-upsert`, items, (reply) => {
      const data = reply.body.data;
      const seen = new Set<number>();
      for (const result of data.results) {
        seen.add(result.index);
        const state = states[result.index]!;
        if (result.externalReference !== state.ref || invalid.has(result.index)) {
          this.fail(`bulk result ${JSON.stringify(result)} does not match item ${result.index}`);
          continue;
        }
        if (result.outcome !== (state.acked ? 'updated' : 'created'))
          this.fail(`${state.ref}: outcome ${result.outcome} for a write that changes the listing`);
        this.acknowledge(state, result.listingId, result.status);
      }
      for (const error of data.errors) {
        seen.add(error.index);
        if (!invalid.has(error.index) || error.code !== 'VALIDATION_FAILED')
          this.fail(`bulk item ${error.index} failed unexpectedly: ${JSON.stringify(error)}`);
      }
      if (seen.size !== items.length)
        this.fail(`bulk answered ${seen.size} of ${items.length} items: ${reply.text.slice(0, 300)}`);
    });
    for (const state of states) state.busy = false;
    return ok;
  }

  async put(call: Call): Promise<boolean> {
    const [state] = this.take(1, 0.3);
    const { body, content } = this.body(state!);
    const existed = !!state!.acked;
    state!.pending = { content, request: ++this.requestSeq };
    const ok = await this.send(
      call,
      'PUT',
      `${EXT}/listings/${encodeURIComponent(state!.ref)}`,
      body,
      (reply) => {
        if (reply.status !== (existed ? 200 : 201)) this.fail(`PUT ${state!.ref} → ${reply.status}`);
        this.acknowledge(state!, reply.body.data.listingId, reply.body.data.status);
      },
    );
    state!.busy = false;
    return ok;
  }

  /** POST /status to another status, or DELETE (status sold) when not sold yet. */
  async statusChange(call: Call): Promise<boolean> {
    const known = this.idleKnown();
    if (known.length === 0) return this.put(call);
    const state = this.pick(known);
    const remove = state.acked!.status !== 'sold' && this.rng() < 0.3;
    const status = remove ? 'sold' : this.pick(STATUSES.filter((s) => s !== state.acked!.status));
    state.busy = true;
    state.pending = { content: { ...state.acked!, status }, request: ++this.requestSeq };
    const urlPath = `${EXT}/listings/${encodeURIComponent(state.ref)}`;
    const ok = await this.send(
      call,
      remove ? 'DELETE' : 'POST',
      remove ? urlPath : `${urlPath}/status`,
      remove ? undefined : { status },
      (reply) => this.acknowledge(state, reply.body.data.listingId, reply.body.data.status),
    );
    state.busy = false;
    return ok;
  }

  /** `workers` concurrent clients, each sending one request after another until stop(). */
  async run(call: Call, workers: number): Promise<void> {
    this.stopped = false;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (!this.stopped) {
          const r = this.rng();
          const ok =
            r < 0.4 ? await this.bulk(call) : r < 0.75 ? await this.put(call) : await this.statusChange(call);
          // A refused or unanswered request (database down, process gone): do not spin.
          if (!ok && !this.stopped) await sleep(50);
        }
      }),
    );
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * Compares what the service returns with what it acknowledged. A write in doubt (sent, never
   * answered with 2xx) is found either whole or not at all; then it is settled either way.
   */
  verify(listings: Map<string, Record<string, any>>): VerifyStats {
    const stats: VerifyStats = { checked: 0, inFlightApplied: 0, inFlightLost: 0 };
    const requests = new Map<number, { applied: string[]; lost: string[] }>();
    for (const state of this.states.values()) {
      const actual = listings.get(state.ref);
      if (state.pending) {
        const { content, request } = state.pending;
        const outcome = requests.get(request) ?? { applied: [], lost: [] };
        requests.set(request, outcome);
        if (actual && this.differences(actual, content).length === 0) {
          outcome.applied.push(state.ref);
          if (state.listingId && actual.id !== state.listingId)
            this.fail(`${state.ref}: id ${actual.id}, acknowledged ${state.listingId}`);
          state.acked = content;
          state.listingId = actual.id;
          stats.inFlightApplied++;
        } else if (state.acked ? actual && this.differences(actual, state.acked).length === 0 : !actual) {
          outcome.lost.push(state.ref);
          stats.inFlightLost++;
        } else {
          this.fail(
            `${state.ref}: a write in doubt left neither its own content nor the acknowledged one: ${this.describe(actual, content)}; acknowledged: ${this.describe(actual, state.acked)}`,
          );
        }
        state.pending = null;
        continue;
      }
      if (!state.acked) {
        if (actual)
          this.fail(`${state.ref}: never written, but present: ${JSON.stringify(actual).slice(0, 200)}`);
        continue;
      }
      stats.checked++;
      if (!actual) {
        this.fail(
          `${state.ref}: acknowledged write lost (listing missing); acknowledged ${JSON.stringify(state.acked)}`,
        );
        continue;
      }
      const diff = this.differences(actual, state.acked);
      if (diff.length) this.fail(`${state.ref}: acknowledged write lost: ${diff.join('; ')}`);
      if (actual.id !== state.listingId)
        this.fail(`${state.ref}: id ${actual.id}, acknowledged ${state.listingId}`);
    }
    for (const [request, { applied, lost }] of requests) {
      if (applied.length && lost.length)
        this.fail(
          `request ${request} was applied in part: ${applied.length} items committed (${applied.slice(0, 3).join(', ')}…), ${lost.length} not (${lost.slice(0, 3).join(', ')}…)`,
        );
    }
    for (const ref of listings.keys()) {
      if (!this.states.has(ref)) this.fail(`a listing nobody wrote: ${ref}`);
    }
    return stats;
  }

  private differences(actual: Record<string, any>, expected: Content): string[] {
    const diff: string[] = [];
    const same = (field: string, a: unknown, e: unknown) => {
      if (JSON.stringify(a) !== JSON.stringify(e))
        diff.push(`${field} ${JSON.stringify(a)} ≠ ${JSON.stringify(e)}`);
    };
    same('title', actual.title, expected.title);
    same('description', actual.description, expected.description);
    same('price', actual.price, expected.price);
    same('mileage', actual.mileage, expected.mileage);
    same('status', actual.status, expected.status);
    same('dealerProfileId', actual.dealerProfileId, expected.dealerProfileId);
    same(
      'images',
      actual.images.map((i: { url: string }) => i.url),
      expected.images,
    );
    same('soldAt present', actual.soldAt !== undefined, expected.status === 'sold');
    return diff;
  }

  private describe(actual: Record<string, any> | undefined, expected: Content | null): string {
    if (!actual) return 'missing';
    if (!expected) return 'present, expected absent';
    return this.differences(actual, expected).join('; ') || 'equal';
  }

  /** How many references hold an acknowledged state. */
  get ackedRefs(): number {
    return [...this.states.values()].filter((s) => s.acked).length;
  }
}

/**
 * Every listing of the partner (`mine=true&status=all`), following sync cursors until `hasMore` is
 * false, which the service answers only when nothing lies after the cursor. The total must equal
 * `totalItems`.
 */
export async function readAll(call: Call): Promise<Map<string, Record<string, any>>> {
  const out = new Map<string, Record<string, any>>();
  let cursor: string | undefined;
  let totalItems = -1;
  for (;;) {
    const query = `mine=true&status=all&pageSize=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const reply = await call('GET', `${EXT}/listings?${query}`);
    if (reply.status !== 200) throw new Error(`GET /listings → ${reply.status} ${reply.text.slice(0, 300)}`);
    const { data, pagination } = reply.body;
    if (totalItems < 0) totalItems = pagination.totalItems;
    for (const listing of data) {
      const seen = out.get(listing.externalReference);
      if (seen && seen.id !== listing.id)
        throw new Error(
          `two listings with reference ${listing.externalReference}: ${seen.id}, ${listing.id}`,
        );
      out.set(listing.externalReference, listing);
    }
    cursor = pagination.nextCursor;
    if (!pagination.hasMore) break;
  }
  if (out.size !== totalItems)
    throw new Error(`read ${out.size} listings by cursor, totalItems says ${totalItems}`);
  return out;
}
