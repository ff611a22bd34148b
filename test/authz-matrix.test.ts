import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateSecret } from '../src/domain/secrets.js';
import {
  type Cell,
  type Credential,
  expand,
  NODES,
  type Node,
  OWN_DEALER,
  OWN_OUTSIDE_DEALER,
  PARTNER_POSITIONS,
  POSITIONS,
  type Position,
  SEED_WRITERS,
  SEEDED,
  SEEDED_KEYS,
  type SeededKey,
  scopeOf,
  subtree,
  type Target,
} from './authz/policy.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type Reply,
  type TestApp,
  unique,
} from './helpers/app.js';
import { allPages, bulkUpsert, putListing } from './helpers/listings-api.js';
import { assertError, getOk, sorted } from './helpers/read-fixtures.js';

/**
 * The authorization matrix: test/authz/policy.ts expanded into cells, each one real HTTPS request
 * whose status and error code are checked, plus what the policy implies for its body (lists stay
 * inside the scope; writes by reference never touch another partner's listing).
 */
const cells = expand();
const MIN_CELLS = 1300;

interface Ref {
  id: string;
  ref: string;
  dealer: Node;
}
interface Caller {
  id: string;
  secret: string;
  own: Ref;
  /** Its listing at a dealer that has since left its scope (restricted callers only). */
  ownOutside?: Ref;
}

describe('authorization matrix (test/authz/policy.ts)', () => {
  let app: TestApp;
  const ids = {} as Record<Node, string>;
  const codes = {} as Record<Node, string>;
  const unknownProfile = randomUUID();
  const unknownCode = unique('no-such-location');
  const unknownListing: Omit<Ref, 'dealer'> = { id: randomUUID(), ref: unique('no-such-ref') };
  const callers = new Map<string, Caller>();
  const seeded = {} as Record<SeededKey, Ref>;
  /** Listings no cell may change (other partners', and own listings of secrets that cannot write): id → state. */
  const untouchable = new Map<string, unknown>();
  /** References of new listings: written by a cell (→ the dealer it named) or refused. */
  const created = new Map<string, Node>();
  const refused = new Set<string>();
  let auditor: string;
  let malformed: string;
  const unknownSecret = generateSecret();
  let checked = 0;

  const callerKey = (credential: Credential, position: Position) => `${credential}|${position}`;
  const idsOf = (nodes: readonly Node[]) => sorted(nodes.map((n) => ids[n]));
  const read = async (id: string) => (await getOk(app, auditor, `/listings/${id}`)).data;

  before(async () => {
    app = await bootApp();
    const tree = await createTree(app);
    for (const node of NODES) {
      ids[node] = tree.ids[node]!;
      codes[node] = tree.codes[node]!;
    }
    const access = (roots: readonly Node[] | 'global') =>
      roots === 'global' ? { global: true } : { roots: roots.map((n) => ids[n]) };

    // Listings of three partners that never act in a cell.
    for (const [writer, { roots }] of Object.entries(SEED_WRITERS)) {
      const partner = await createPartner(app, {
        ...access(roots),
        scopes: ALL_SCOPES,
        name: unique(writer),
      });
      const keys = SEEDED_KEYS.filter((k) => SEEDED[k].writer === writer);
      const items = keys.map((key) => ({
        externalReference: unique(`seed-${SEEDED[key].dealer}`),
        ...listingBody({ dealerProfileId: ids[SEEDED[key].dealer], status: SEEDED[key].status }),
      }));
      const written = await bulkUpsert(app, partner.secret, items);
      for (const [i, key] of keys.entries()) {
        const ref = items[i]!.externalReference;
        seeded[key] = { id: written[ref]!, ref, dealer: SEEDED[key].dealer };
      }
    }
    auditor = (await createPartner(app, { global: true, name: unique('auditor') })).secret;

    // One partner per (credential, position): created with every scope (and, when restricted, one
    // extra root), its own listings written, then brought into its credential state and position.
    for (const credential of [
      'rotated',
      'disabled',
      'read:listings',
      'read:locations',
      'write:listings',
      'all scopes',
    ] as const) {
      for (const position of PARTNER_POSITIONS) {
        const { roots } = POSITIONS[position];
        const extra = OWN_OUTSIDE_DEALER[position];
        const partner = await createPartner(app, {
          ...access(roots === 'global' ? roots : [...roots, ...(extra ? [extra] : [])]),
          scopes: ALL_SCOPES,
          name: unique(`${credential}-${position}`),
        });
        const ownListing = async (dealer: Node): Promise<Ref> => {
          const ref = unique(`own-${position}`);
          const id = await putListing(
            app,
            partner.secret,
            ref,
            listingBody({ dealerProfileId: ids[dealer] }),
          );
          return { id, ref, dealer };
        };
        const own = await ownListing(OWN_DEALER[position]);
        const caller: Caller = { id: partner.id, secret: partner.secret, own };
        if (extra && roots !== 'global') {
          caller.ownOutside = await ownListing(extra);
          untouchable.set(caller.ownOutside.id, undefined);
          const rootProfileIds = roots.map((n) => ids[n]);
          await app.admin('PATCH', `/partners/${partner.id}`, {
            access: { scope: 'restricted', rootProfileIds },
          });
        }
        if (credential === 'rotated') {
          const rotated = await app.admin('POST', `/partners/${partner.id}/rotate-secret`, {});
          assert.notEqual(rotated.secret, partner.secret);
        } else if (credential === 'disabled') {
          await app.admin('PATCH', `/partners/${partner.id}`, { disabled: true });
        } else if (credential !== 'all scopes') {
          await app.admin('PATCH', `/partners/${partner.id}`, { scopes: [credential] });
        }
        callers.set(callerKey(credential, position), caller);
        if (credential !== 'write:listings' && credential !== 'all scopes')
          untouchable.set(own.id, undefined);
      }
    }
    const real = callers.get(callerKey('all scopes', 'group'))!.secret;
    malformed = real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A');
    for (const key of SEEDED_KEYS) untouchable.set(seeded[key].id, undefined);
    for (const id of untouchable.keys()) untouchable.set(id, await read(id));
  });
  after(() => app.close());

  /** Every listing that exists before the matrix runs, with its dealer. */
  const known = (): Ref[] => [
    ...Object.values(seeded),
    ...[...callers.values()].flatMap((c) => (c.ownOutside ? [c.own, c.ownOutside] : [c.own])),
  ];

  function secretOf(cell: Cell): string | undefined {
    switch (cell.credential) {
      case 'no secret':
        return undefined;
      case 'malformed':
        return malformed;
      case 'unknown':
        return unknownSecret;
      default:
        return callers.get(callerKey(cell.credential, cell.position))!.secret;
    }
  }

  function listingOf(
    cell: Cell,
    target: Target & { kind: 'listing' },
  ): Omit<Ref, 'dealer'> & { dealer?: Node } {
    if (target.key === 'unknown') return unknownListing;
    const caller = callers.get(callerKey(cell.credential, cell.position));
    if (target.key === 'own') return caller!.own;
    if (target.key === 'own outside') return caller!.ownOutside!;
    return seeded[target.key];
  }

  const nodeId = (node: Node | 'unknown') => (node === 'unknown' ? unknownProfile : ids[node]);
  const nodeCode = (node: Node | 'unknown') => (node === 'unknown' ? unknownCode : codes[node]);

  /** The request of a cell: method, path, body; and the listing reference a write names. */
  function request(cell: Cell): {
    method: string;
    path: string;
    body?: unknown;
    ref?: string;
  } {
    const { op, target } = cell;
    const key = `${op.endpoint} ${op.variant ?? ''}`.trim();
    const node = target.kind === 'location' || target.kind === 'new' ? target.node : undefined;
    const list = '?status=all&pageSize=200';
    switch (key) {
      case 'GET /api/external/v1/openapi.json':
        return { method: 'GET', path: '/api/external/v1/openapi.json' };
      case 'GET /listings status=all':
        return { method: 'GET', path: `${EXT}/listings${list}` };
      case 'GET /listings dealerId':
        return { method: 'GET', path: `${EXT}/listings${list}&dealerId=${nodeId(node!)}` };
      case 'GET /listings parentDealerId':
        return { method: 'GET', path: `${EXT}/listings${list}&parentDealerId=${nodeId(node!)}` };
      case 'GET /listings locationCode':
        return {
          method: 'GET',
          path: `${EXT}/listings${list}&locationCode=${encodeURIComponent(nodeCode(node!))}`,
        };
      case 'GET /listings/{id}':
        return { method: 'GET', path: `${EXT}/listings/${listingOf(cell, target as never).id}` };
      case 'GET /locations withCounts=false':
        return { method: 'GET', path: `${EXT}/locations?withCounts=false` };
      case 'GET /locations parentId':
        return { method: 'GET', path: `${EXT}/locations?withCounts=false&parentId=${nodeId(node!)}` };
      case 'GET /locations/{id}/listings status=all':
        return { method: 'GET', path: `${EXT}/locations/${nodeId(node!)}/listings${list}` };
      case 'GET /locations/{id}/listings includeChildren=true':
        return {
          method: 'GET',
          path: `${EXT}/locations/${nodeId(node!)}/listings${list}&includeChildren=true`,
        };
      case 'GET /reference/enums':
        return { method: 'GET', path: `${EXT}/reference/enums` };
    }
    // Writes name a reference: a new one per cell, or an existing listing's.
    let ref: string;
    let dealer: Record<string, string>;
    if (target.kind === 'new') {
      ref = unique(`new-${target.node}`);
      dealer =
        op.variant === 'dealerLocationCode in the body'
          ? { dealerLocationCode: nodeCode(target.node) }
          : { dealerProfileId: nodeId(target.node) };
    } else {
      const listing = listingOf(cell, target as Target & { kind: 'listing' });
      ref = listing.ref;
      // The own listing outside the scope: the body moves it back inside, and is still refused.
      const moveBack = target.kind === 'listing' && target.key === 'own outside';
      const node = moveBack ? OWN_DEALER[cell.position as 'group'] : listing.dealer;
      dealer = { dealerProfileId: node ? ids[node] : ids.A };
    }
    const path = `${EXT}/listings/${encodeURIComponent(ref)}`;
    switch (key) {
      case 'POST /listings/{ref}/status':
        return { method: 'POST', path: `${path}/status`, body: { status: 'pending' }, ref };
      case 'DELETE /listings/{ref}':
        return { method: 'DELETE', path, ref };
      case 'PATCH /listings/{ref}':
        return { method: 'PATCH', path, body: { mileage: 4242 }, ref };
      case 'PUT /listings/{ref} dealerProfileId in the body':
      case 'PUT /listings/{ref} dealerLocationCode in the body':
        return { method: 'PUT', path, body: listingBody(dealer), ref };
      case 'POST /listings/bulk-upsert one item, dealer named':
        return {
          method: 'POST',
          path: `${EXT}/listings/bulk-upsert`,
          body: [{ externalReference: ref, ...listingBody(dealer) }],
          ref,
        };
    }
    throw new Error(`no request for ${key}`);
  }

  /** The dealer profiles a 200 list of this cell may show. null: unbounded (global, whole scope). */
  function allowedNodes(cell: Cell): Node[] | null {
    const node = cell.target.kind === 'location' ? (cell.target.node as Node) : undefined;
    switch (cell.op.confine) {
      case 'scope':
        return cell.position === 'global' ? null : scopeOf(cell.position);
      case 'target':
        return [node!];
      case 'target subtree':
        return cell.op.list === 'locations' ? subtree([node!]).filter((n) => n !== node) : subtree([node!]);
      default:
        throw new Error('no confine');
    }
  }

  function checkListingList(cell: Cell, reply: Reply): void {
    const allowed = allowedNodes(cell);
    const items: { id: string; dealerProfileId: string }[] = reply.body.data;
    if (allowed) {
      const allowedIds = new Set(allowed.map((n) => ids[n]));
      for (const item of items)
        assert.ok(
          allowedIds.has(item.dealerProfileId),
          `listing ${item.id} at ${item.dealerProfileId} is outside ${allowed.join(',')}`,
        );
      assert.equal(reply.body.pagination.totalItems, items.length, 'a restricted list fits one page');
      // Every listing that exists at those profiles (any partner's) is shown.
      const shown = new Set(items.map((i) => i.id));
      for (const listing of known().filter((l) => allowed.includes(l.dealer)))
        assert.ok(shown.has(listing.id), `listing ${listing.ref} at ${listing.dealer} is missing`);
    } else {
      // A global caller sees every listing there is: at least all this matrix knows of, and on a
      // page that holds them all, each of them.
      const all = known();
      const { totalItems } = reply.body.pagination;
      assert.ok(totalItems >= all.length, `a global list counts ${totalItems} of ${all.length} listings`);
      if (totalItems === items.length) {
        const shown = new Set(items.map((i) => i.id));
        for (const listing of all)
          assert.ok(shown.has(listing.id), `listing ${listing.ref} at ${listing.dealer} is missing`);
      }
    }
  }

  function checkLocationList(cell: Cell, reply: Reply): void {
    const allowed = allowedNodes(cell);
    const got = sorted(reply.body.data.map((l: { id: string }) => l.id));
    if (allowed) {
      assert.deepEqual(got, idsOf(allowed), 'locations are exactly the allowed profiles');
      if (cell.op.confine === 'scope') {
        const roots = POSITIONS[cell.position].roots as Node[];
        const rootFlags = reply.body.data
          .filter((l: { isRoot: boolean }) => l.isRoot)
          .map((l: { id: string }) => l.id);
        assert.deepEqual(sorted(rootFlags), idsOf(roots));
      }
    } else {
      for (const id of idsOf(NODES)) assert.ok(got.includes(id), `global location list lacks ${id}`);
    }
  }

  async function runCell(cell: Cell): Promise<void> {
    const secret = secretOf(cell);
    const req = request(cell);
    const { target } = cell;
    const victim =
      target.kind === 'listing' && target.key in seeded ? seeded[target.key as SeededKey] : undefined;
    const reply = await app.call(req.method, req.path, { ...(secret ? { secret } : {}), body: req.body });
    const { expect } = cell;
    if (expect.code) assertError(reply, expect.status, expect.code);
    else assert.equal(reply.status, expect.status, `${reply.status} ${reply.text.slice(0, 300)}`);
    if (expect.status === 401) assert.equal(reply.headers['www-authenticate'], 'Bearer');

    const isNew = cell.target.kind === 'new';
    const ok = reply.status < 300;
    if (ok && cell.op.scope !== null) {
      const caller = callers.get(callerKey(cell.credential, cell.position))!;
      assert.equal(reply.body.meta.partner.id, caller.id);
      const access = reply.body.meta.partner.access;
      // Writes name the partner only (docs/contract.md#write-answers): never the access list.
      if (cell.op.scope === 'write:listings') {
        assert.deepEqual(Object.keys(reply.body.meta.partner).sort(), ['id', 'name']);
      } else if (cell.position === 'global')
        assert.deepEqual(access, { scope: 'global', rootProfileIds: [], profileIds: [] });
      else {
        assert.equal(access.scope, 'restricted');
        assert.deepEqual(sorted(access.profileIds), idsOf(scopeOf(cell.position)));
      }
    }
    if (ok && cell.op.list === 'listings') checkListingList(cell, reply);
    if (ok && cell.op.list === 'locations') checkLocationList(cell, reply);
    if (ok && cell.op.endpoint === 'GET /listings/{id}') {
      const listing = listingOf(cell, cell.target as Target & { kind: 'listing' });
      assert.equal(reply.body.data.id, listing.id);
      assert.equal(reply.body.data.dealerProfileId, ids[listing.dealer!]);
    }
    if (
      ok &&
      (cell.op.endpoint === 'POST /listings/{ref}/status' || cell.op.endpoint === 'DELETE /listings/{ref}')
    ) {
      const own = callers.get(callerKey(cell.credential, cell.position))!.own;
      const status = cell.op.endpoint === 'DELETE /listings/{ref}' ? 'sold' : 'pending';
      const { outcome, ...data } = reply.body.data;
      assert.deepEqual(data, { listingId: own.id, externalReference: own.ref, status });
      assert.ok(outcome === 'updated' || outcome === 'unchanged', outcome);
    }
    if (cell.op.endpoint === 'PUT /listings/{ref}') {
      if (ok) {
        assert.equal(reply.body.data.created, expect.status === 201);
        if (victim)
          assert.notEqual(reply.body.data.listingId, victim.id, "another partner's listing was written");
        if (cell.target.kind === 'listing' && cell.target.key === 'own')
          assert.equal(reply.body.data.listingId, listingOf(cell, cell.target).id);
        if (isNew) created.set(req.ref!, (cell.target as { node: Node }).node);
      } else if (isNew) refused.add(req.ref!);
    }
    if (cell.op.endpoint === 'POST /listings/bulk-upsert') {
      if (expect.item?.written) {
        assert.deepEqual([reply.body.data.successCount, reply.body.data.errorCount], [1, 0], reply.text);
        const result = reply.body.data.results[0];
        assert.equal(result.externalReference, req.ref);
        if (victim) assert.notEqual(result.listingId, victim.id, "another partner's listing was written");
        if (isNew) created.set(req.ref!, (cell.target as { node: Node }).node);
      } else {
        if (expect.item) {
          assert.deepEqual([reply.body.data.successCount, reply.body.data.errorCount], [0, 1], reply.text);
          const { index, externalReference, status, code } = reply.body.data.errors[0];
          assert.deepEqual(
            { index, externalReference, status, code },
            { index: 0, externalReference: req.ref, status: expect.item.status, code: expect.item.code },
          );
        }
        if (isNew) refused.add(req.ref!);
      }
    }
    // A write that names another partner's listing (or an untouchable one) left it exactly as it was.
    if (cell.op.phase === 'write' && cell.target.kind === 'listing' && cell.target.key !== 'unknown') {
      const listing = listingOf(cell, cell.target);
      if (untouchable.has(listing.id))
        assert.deepEqual(
          await read(listing.id),
          untouchable.get(listing.id),
          `listing ${listing.ref} changed`,
        );
    }
    checked++;
  }

  for (const cell of cells) test(cell.name, () => runCell(cell));

  test('after the matrix: refused writes left no listing, accepted ones landed where named, untouchables unchanged', async () => {
    for (const [id, state] of untouchable) assert.deepEqual(await read(id), state, `listing ${id} changed`);
    const all = [
      ...(await allPages(app, auditor, `/listings?status=all&parentDealerId=${ids.A}`)),
      ...(await allPages(app, auditor, `/listings?status=all&parentDealerId=${ids.B}`)),
    ];
    const byRef = new Map<string, { dealerProfileId: string }[]>();
    for (const l of all) byRef.set(l.externalReference, [...(byRef.get(l.externalReference) ?? []), l]);
    assert.ok(refused.size > 100, `only ${refused.size} refused creates`);
    for (const ref of refused)
      assert.equal(byRef.get(ref), undefined, `refused reference ${ref} was written`);
    assert.ok(created.size > 50, `only ${created.size} accepted creates`);
    for (const [ref, node] of created) {
      assert.deepEqual(
        byRef.get(ref)?.map((l) => l.dealerProfileId),
        [ids[node]],
        `${ref} should be one listing at ${node}`,
      );
    }
  });

  test('bulk of 100 with one out-of-scope item: the 99 written, that one 403 PROFILE_FORBIDDEN', async () => {
    const writer = await createPartner(app, { roots: [ids.A], scopes: ALL_SCOPES });
    const inside: Node[] = ['A', 'A1', 'A1a', 'A2'];
    const bad = 57;
    const nodes = Array.from(
      { length: 100 },
      (_, i): Node => (i === bad ? 'B1' : inside[i % inside.length]!),
    );
    const items = nodes.map((node, i) => ({
      externalReference: unique(`bulk-${i}`),
      ...listingBody({ dealerProfileId: ids[node], title: `Car ${i}` }),
    }));
    const reply = await app.call('POST', `${EXT}/listings/bulk-upsert`, {
      secret: writer.secret,
      body: items,
    });
    assert.equal(reply.status, 200, reply.text);
    const { successCount, errorCount, results, errors } = reply.body.data;
    assert.deepEqual([successCount, errorCount], [99, 1]);
    assert.deepEqual(
      errors.map((e: any) => [e.index, e.externalReference, e.status, e.code]),
      [[bad, items[bad]!.externalReference, 403, 'PROFILE_FORBIDDEN']],
    );
    assert.deepEqual(
      results.map((r: any) => r.index),
      items.map((_, i) => i).filter((i) => i !== bad),
    );

    // Read back: exactly the 99, each at the dealer it named, with its content.
    const mine = await allPages(app, writer.secret, '/listings?status=all&mine=true');
    const expectedRefs = items.filter((_, i) => i !== bad).map((i) => i.externalReference);
    assert.deepEqual(sorted(mine.map((l) => l.externalReference)), sorted(expectedRefs));
    for (const listing of mine) {
      const index = items.findIndex((i) => i.externalReference === listing.externalReference);
      assert.equal(listing.dealerProfileId, ids[nodes[index]!]);
      assert.equal(listing.title, `Car ${index}`);
      assert.equal(listing.id, results.find((r: any) => r.index === index).listingId);
    }
    const atB1 = await allPages(app, auditor, `/listings?status=all&dealerId=${ids.B1}`);
    assert.ok(!atB1.some((l) => l.externalReference === items[bad]!.externalReference));
  });

  test('cell count', (t) => {
    t.diagnostic(`${checked} of ${cells.length} authorization cells checked`);
    assert.equal(checked, cells.length, 'every cell ran to the end');
    assert.ok(checked >= MIN_CELLS, `${checked} cells, expected at least ${MIN_CELLS}`);
  });
});
