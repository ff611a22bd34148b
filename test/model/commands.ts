import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Reply as HttpReply } from '../helpers/app.js';
import { EXT } from '../helpers/app.js';
import {
  Bindings,
  type Body,
  describeListing,
  type Item,
  key,
  type Op,
  permutations,
  type Reply,
  Simulation,
  STATUSES,
  type State,
  show,
} from './model.js';
import { DEALERS, type Layout, type PartnerKey, partnersOf, type World } from './world.js';

/** Few references, so that writers collide; one needs percent-encoding, two differ only in case. */
export const REFS = ['k1', 'K1', 'k2', 'k 3/é'] as const;

// ---------------------------------------------------------------------------------------------
// Generators

const body: fc.Arbitrary<Body> = fc.record(
  {
    title: fc.constantFrom('Golf', 'Polo', ' Golf '),
    price: fc.constantFrom(9950, 12500),
    mileage: fc.constantFrom(0, 48000),
    status: fc.constantFrom(...STATUSES),
    dealer: fc.record({
      by: fc.constantFrom('id' as const, 'code' as const),
      key: fc.constantFrom(...DEALERS),
    }),
  },
  // Optional fields are left out often: price then is required or not by the resulting status.
  { requiredKeys: ['title'] },
);
/** A body that fails validation whatever the state: an empty title. */
const badBody = body.map((b): Body => ({ ...b, title: '' }));

export function opArbitrary(layout: Layout): fc.Arbitrary<Op> {
  const p = fc.constantFrom(...partnersOf(layout));
  const ref = fc.constantFrom(...REFS);
  const item: fc.Arbitrary<Item> = fc.record({ ref, body });
  const badItem: fc.Arbitrary<Item> = fc.oneof(
    fc.record({ ref, body: badBody }),
    body.map((b): Item => ({ body: b })), // no externalReference
  );
  const bulk = fc
    .tuple(
      p,
      fc.array(item, { minLength: 1, maxLength: 5 }),
      fc.option(fc.tuple(badItem, fc.nat()), { freq: 2 }),
    )
    .map(([p, items, bad]): Op => {
      const all = [...items];
      if (bad) all.splice(bad[1] % (all.length + 1), 0, bad[0]);
      return { kind: 'bulk', p, items: all };
    });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('put' as const),
        p,
        ref,
        body: fc.oneof({ weight: 9, arbitrary: body }, { weight: 1, arbitrary: badBody }),
      }),
    },
    { weight: 3, arbitrary: bulk },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('status' as const),
        p,
        ref,
        status: fc.oneof(
          { weight: 9, arbitrary: fc.constantFrom(...STATUSES) },
          { weight: 1, arbitrary: fc.constant('archived' as const) },
        ),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), p, ref }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('readMine' as const), p }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('readScope' as const),
        p,
        status: fc.constantFrom('all' as const, 'active' as const),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('get' as const),
        p,
        target: fc.option(fc.record({ owner: p, ref }), { freq: 5, nil: null }),
      }),
    },
  );
}

export function formatOp(op: Op): string {
  const b = (x: Body) =>
    `{${[
      JSON.stringify(x.title),
      x.price !== undefined ? `price ${x.price}` : 'no price',
      x.mileage !== undefined ? `km ${x.mileage}` : '',
      x.status ?? '',
      x.dealer ? `dealer ${x.dealer.by}(${x.dealer.key})` : '',
    ]
      .filter(Boolean)
      .join(' ')}}`;
  switch (op.kind) {
    case 'put':
      return `${op.p} PUT ${JSON.stringify(op.ref)} ${b(op.body)}`;
    case 'bulk':
      return `${op.p} BULK [${op.items.map((i) => `${i.ref === undefined ? '(no ref)' : JSON.stringify(i.ref)} ${b(i.body)}`).join(', ')}]`;
    case 'status':
      return `${op.p} STATUS ${JSON.stringify(op.ref)} ${op.status}`;
    case 'delete':
      return `${op.p} DELETE ${JSON.stringify(op.ref)}`;
    case 'readMine':
      return `${op.p} GET mine`;
    case 'readScope':
      return `${op.p} GET scope status=${op.status}`;
    case 'get':
      return `${op.p} GET id of ${op.target ? `${op.target.owner}/${JSON.stringify(op.target.ref)}` : '(unknown id)'}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Execution against the service

export interface Stats {
  runs: number;
  steps: number;
  concurrentSteps: number;
  ops: Record<string, number>;
  requests: number;
  orders: number;
}
export const newStats = (): Stats => ({
  runs: 0,
  steps: 0,
  concurrentSteps: 0,
  ops: {},
  requests: 0,
  orders: 0,
});

function wireBody(world: World, b: Body, ref?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { title: b.title };
  if (ref !== undefined) out.externalReference = ref;
  if (b.price !== undefined) out.price = b.price;
  if (b.mileage !== undefined) out.mileage = b.mileage;
  if (b.status !== undefined) out.status = b.status;
  if (b.dealer?.by === 'id') out.dealerProfileId = world.dealerId[b.dealer.key];
  if (b.dealer?.by === 'code') out.dealerLocationCode = world.dealerCode[b.dealer.key];
  return out;
}

async function send(world: World, op: Op, stats: Stats): Promise<HttpReply> {
  const secret = world.secret[op.p];
  const call = (method: string, path: string, body?: unknown) => {
    stats.requests++;
    return world.app.call(method, `${EXT}${path}`, { secret, ...(body === undefined ? {} : { body }) });
  };
  const at = (ref: string) => `/listings/${encodeURIComponent(ref)}`;
  switch (op.kind) {
    case 'put':
      return call('PUT', at(op.ref), wireBody(world, op.body));
    case 'bulk':
      return call(
        'POST',
        '/listings/bulk-upsert',
        op.items.map((i) => wireBody(world, i.body, i.ref)),
      );
    case 'status':
      return call('POST', `${at(op.ref)}/status`, { status: op.status });
    case 'delete':
      return call('DELETE', at(op.ref));
    case 'readMine':
      return call('GET', '/listings?mine=true&status=all&pageSize=200');
    case 'readScope': {
      // A global reader sees every earlier run's listings too: those all precede this run's start.
      const since =
        world.layout.partners[op.p] === 'global' ? `&updatedSince=${world.startedAt.toISOString()}` : '';
      return call('GET', `/listings?status=${op.status}&pageSize=200${since}`);
    }
    case 'get':
      return call('GET', `/listings/${op.id}`);
  }
}

/** The service's answer in the model's terms; the wire order of lists is checked here too. */
function observe(world: World, op: Op, reply: HttpReply, settled: boolean): Reply {
  const { status: http, body } = reply;
  if (http >= 400) return { http, code: body?.error?.code };
  const listing = (l: any) => ({
    id: l.id,
    owner: world.partnerKey.get(l.externalProvider) ?? `(partner ${l.externalProvider})`,
    ref: l.externalReference,
    dealer: world.dealerKey.get(l.dealerProfileId) ?? `(dealer ${l.dealerProfileId})`,
    status: l.status,
    title: l.title,
    price: l.price,
    mileage: l.mileage,
    createdAt: l.createdAt,
    updatedAt: l.updatedAt,
    soldAt: l.soldAt ?? null,
  });
  switch (op.kind) {
    case 'put':
    case 'status':
    case 'delete':
      return { http, data: body.data };
    case 'bulk': {
      const { successCount, errorCount, results, errors } = body.data;
      return {
        http,
        successCount,
        errorCount,
        results,
        errors: errors.map((e: any) => ({
          index: e.index,
          ...('externalReference' in e ? { externalReference: e.externalReference } : {}),
          code: e.code,
          status: e.status,
        })),
      };
    }
    case 'readMine':
    case 'readScope': {
      const data: any[] = body.data;
      // The count and the page are two queries (on PostgreSQL two connections): with a write
      // committing between them they may disagree, so the count is compared only when nothing is in flight.
      if (settled && body.pagination.totalItems !== data.length)
        return { http, wrong: `totalItems ${body.pagination.totalItems} but ${data.length} listings` };
      // Documented order: updatedAt ascending, then id. The service orders by its stored
      // microseconds and shows milliseconds, so among equal shown values the id order is not visible.
      for (let i = 1; i < data.length; i++) {
        const [a, b] = [data[i - 1], data[i]];
        if (a.updatedAt > b.updatedAt)
          return {
            http,
            wrong: `not in updatedAt order at ${i}: ${show([a.id, a.updatedAt])} then ${show([b.id, b.updatedAt])}`,
          };
      }
      return {
        http,
        listings: data
          .map(listing)
          .sort((a, b) => key(a.owner as PartnerKey, a.ref).localeCompare(key(b.owner as PartnerKey, b.ref))),
      };
    }
    case 'get':
      return { http, listing: listing(body.data) };
  }
}

// ---------------------------------------------------------------------------------------------
// The model-based command: one step = a group of operations sent at the same time

export class Model {
  state: State = new Map();
  readonly sim: Simulation;
  constructor(
    readonly layout: Layout,
    readonly stats: Stats,
  ) {
    this.sim = new Simulation(layout);
    stats.runs++;
  }
}

export class Step implements fc.AsyncCommand<Model, World> {
  constructor(readonly ops: readonly Op[]) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, world: World): Promise<void> {
    const { stats } = model;
    stats.steps++;
    if (this.ops.length > 1) stats.concurrentSteps++;
    for (const op of this.ops) stats.ops[op.kind] = (stats.ops[op.kind] ?? 0) + 1;
    // A `get` names a listing known before the step, or an id that never existed.
    const ops = this.ops.map((op): Op => {
      if (op.kind !== 'get') return op;
      const target = op.target && model.state.get(key(op.target.owner, op.target.ref));
      return { ...op, id: typeof target?.id === 'string' ? target.id : randomUUID() };
    });
    const replies = await Promise.all(ops.map((op) => send(world, op, stats)));
    // Then every partner's own listings: the end state of the step, with nothing in flight.
    const finals = partnersOf(model.layout).map((p): Op => ({ kind: 'readMine', p }));
    const finalReplies = await Promise.all(finals.map((op) => send(world, op, stats)));
    const all = [...ops, ...finals];
    const observed = [...replies, ...finalReplies].map((reply, i) => {
      const seen = observe(world, all[i]!, reply, ops.length === 1 || i >= ops.length);
      // Wrong whatever the order: a 5xx (a deadlock or a crash surfacing) or a malformed list.
      if (reply.status >= 500 || seen.wrong)
        throw new Error(
          `${this.context(model, ops)}\n#${i} ${formatOp(all[i]!)} → ${reply.status >= 500 ? `${reply.status} ${reply.text}` : seen.wrong}`,
        );
      return seen;
    });

    // Some order of the concurrent operations must explain every answer and the end state.
    const taken = new Set([...model.state.values()].map((l) => l.id as string));
    const failures: { orders: string[]; why: string }[] = [];
    for (const order of permutations(ops.length)) {
      stats.orders++;
      const bindings = new Bindings(taken);
      let state = model.state;
      let wrong: string | null = null;
      for (const i of [...order, ...finals.map((_, k) => ops.length + k)]) {
        const applied = model.sim.apply(state, all[i]!);
        state = applied.state;
        wrong = bindings.unify(applied.reply, observed[i]);
        if (wrong) {
          wrong = `#${i} ${formatOp(all[i]!)}${wrong}\n        expected ${show(applied.reply, bindings)}\n        got      ${show(observed[i])}`;
          break;
        }
      }
      if (!wrong) {
        model.state = bindings.settle(state);
        return;
      }
      const name = order.map((i) => `#${i}`).join(' → ');
      const same = failures.find((f) => f.why === wrong);
      if (same) same.orders.push(name);
      else failures.push({ orders: [name], why: wrong });
    }
    throw new Error(
      [
        `No serialization of this step explains the service's answers. ${this.context(model, ops)}`,
        'Answers:',
        ...observed.map(
          (o, i) => `  #${i} ${i >= ops.length ? `${formatOp(all[i]!)} (end state) ` : ''}${show(o)}`,
        ),
        'Why each order fails:',
        ...failures.map((f) => `  order ${f.orders.join(', ')}: ${f.why}`),
      ].join('\n'),
    );
  }

  private context(model: Model, ops: readonly Op[]): string {
    return [
      `Layout ${model.layout.name}.`,
      'Step (sent at the same time):',
      ...ops.map((op, i) => `  #${i} ${formatOp(op)}`),
      'Model state before the step:',
      ...([...model.state.values()].map((l) => `  ${describeListing(l)}`).join('\n') || '  (empty)').split(
        '\n',
      ),
    ].join('\n');
  }

  toString(): string {
    return this.ops.length === 1 ? formatOp(this.ops[0]!) : `[${this.ops.map(formatOp).join(' ‖ ')}]`;
  }
}

/** A step: mostly one to three operations at once, sometimes four. */
export function stepArbitrary(layout: Layout): fc.Arbitrary<Step> {
  return fc.array(opArbitrary(layout), { minLength: 1, maxLength: 4 }).map((ops) => new Step(ops));
}
