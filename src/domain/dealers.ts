import type { AuditContext, AuditStore } from '../store/audit.js';
import type { Db, Queryable } from '../store/db.js';
import type { Dealer, DealerInput, DealerStore } from '../store/dealers.js';
import { DbError } from '../store/errors.js';
import type { PartnerStore } from '../store/partners.js';
import { moveImpact } from './dealer-moves.js';
import { fieldProblem, ProblemError, problem } from './errors.js';
import { messages } from './messages.js';

type NewDealer = DealerInput & { parentLocationCode?: string | undefined };
export type DealerTreeNode = NewDealer & { children?: DealerTreeNode[] | undefined };

/** The fields a new profile was given (not its code and parent, said on their own), for its audit entry. */
function given(input: NewDealer): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (['locationCode', 'parentId', 'parentLocationCode'].includes(key)) continue;
    if (value === undefined || value === null || value === '') continue;
    if (key === 'metadata' && typeof value === 'object' && !Object.keys(value).length) continue;
    out[key] = value;
  }
  return out;
}

/** How many location codes a dealers.imported entry names. */
const IMPORT_CODES_RECORDED = 100;

const invalid = (path: string, message: string) => fieldProblem('VALIDATION_FAILED', path, message);

/** Translates the rule a dealer write broke into what the operator did wrong. */
function explain(error: unknown, locationCode: string | undefined): never {
  if (!(error instanceof DbError)) throw error;
  switch (error.failure) {
    case 'location-code-taken':
      throw problem('CONFLICT', messages.locationCodeInUse(String(locationCode)));
    case 'dealer-cycle':
      throw invalid('parentId', 'this parent would make the profile its own ancestor');
    case 'dealer-own-parent':
      throw invalid('parentId', 'a profile cannot be its own parent');
    case 'dealer-parent-missing':
      throw invalid('parentId', 'no dealer profile has this id');
    default:
      throw error;
  }
}

async function resolveParent(deps: DealerDeps, input: NewDealer, tx: Queryable): Promise<string | null> {
  if (input.parentId) return input.parentId;
  if (!input.parentLocationCode) return null;
  const ids = await deps.dealers.idsByCodes([input.parentLocationCode], tx);
  const id = ids.get(input.parentLocationCode.toLowerCase());
  if (!id)
    throw invalid(
      'parentLocationCode',
      `no dealer profile has the location code "${input.parentLocationCode}"`,
    );
  return id;
}

async function createDealer(deps: DealerDeps, input: NewDealer, ctx: AuditContext): Promise<Dealer> {
  return deps.db
    .transaction(async (tx) => {
      const dealer = await deps.dealers.create(
        { ...input, parentId: await resolveParent(deps, input, tx) },
        tx,
      );
      await deps.audit.record(
        {
          action: 'dealer.created',
          dealerId: dealer.id,
          // What the new profile was given: an audit row that says only its code says too little.
          details: { locationCode: dealer.locationCode, parentId: dealer.parentId, ...given(input) },
        },
        ctx,
        tx,
      );
      return dealer;
    })
    .catch((error) => explain(error, input.locationCode));
}

async function updateDealer(
  deps: DealerDeps,
  id: string,
  patch: Partial<NewDealer>,
  ctx: AuditContext,
): Promise<Dealer | undefined> {
  return deps.db
    .transaction(async (tx) => {
      const parentId =
        patch.parentId !== undefined || patch.parentLocationCode !== undefined
          ? await resolveParent(deps, patch as NewDealer, tx)
          : undefined;
      const before = await deps.dealers.getForUpdate(id, tx);
      const after = (
        await deps.dealers.update(id, { ...patch, ...(parentId !== undefined ? { parentId } : {}) }, tx)
      )?.dealer;
      if (before && after) {
        const changed: Record<string, { from: unknown; to: unknown }> = {};
        for (const [key, to] of Object.entries(after)) {
          const from = (before as unknown as Record<string, unknown>)[key];
          if (key !== 'updatedAt' && JSON.stringify(from) !== JSON.stringify(to)) changed[key] = { from, to };
        }
        // The parent by its location code, not the whole profile read beside it.
        if (changed.parent)
          changed.parent = {
            from: before.parent?.locationCode ?? null,
            to: after.parent?.locationCode ?? null,
          };
        if (Object.keys(changed).length) {
          await deps.audit.record(
            { action: 'dealer.updated', dealerId: id, details: { changes: changed } },
            ctx,
            tx,
          );
        }
      }
      return after;
    })
    .catch((error) => explain(error, patch.locationCode));
}

/**
 * Creates or updates a whole tree in one transaction: each node by its location code, children
 * under their parent. All of it lands, or none of it (the error names the node).
 */
async function importDealers(
  deps: DealerDeps,
  nodes: DealerTreeNode[],
  ctx: AuditContext,
): Promise<{ created: number; updated: number; unchanged: number; dealers: Dealer[] }> {
  let created = 0;
  let updated = 0;
  let unchanged = 0;
  const dealers: Dealer[] = [];
  await deps.db.transaction(async (tx) => {
    const visit = async (node: DealerTreeNode, parentId: string | null | undefined, path: string) => {
      const { children, ...fields } = node;
      try {
        const named = fields.parentId !== undefined || fields.parentLocationCode !== undefined;
        const own = named ? await resolveParent(deps, fields, tx) : undefined;
        // A child sits under the node it is nested in: a parent it names as well must be that one,
        // or the file says two things and neither is taken without a word.
        if (parentId !== undefined && named && own !== parentId) {
          throw invalid(
            fields.parentId !== undefined ? 'parentId' : 'parentLocationCode',
            'names another parent than the profile this one is nested under: leave it out, or move the node',
          );
        }
        const existing = (await deps.dealers.idsByCodes([fields.locationCode], tx)).get(
          fields.locationCode.toLowerCase(),
        );
        // A profile already there keeps its parent unless the file names one (parentId null: the
        // top level): an import that only meant to change a phone number once moved a location
        // to the top level, out of every partner's scope that reached it through its group.
        const parent = parentId !== undefined ? parentId : existing && !named ? undefined : (own ?? null);
        let dealer: Dealer | undefined;
        if (existing) {
          const result = await deps.dealers.update(existing, { ...fields, parentId: parent }, tx);
          dealer = result?.dealer;
          if (result?.changed) updated++;
          else unchanged++;
        } else {
          dealer = await deps.dealers.create({ ...fields, parentId: parent ?? null }, tx);
          created++;
        }
        dealers.push(dealer!);
      } catch (error) {
        if (error instanceof ProblemError && error.issues) {
          throw problem(
            error.code,
            `${path} (${fields.locationCode}): ${error.message}`,
            error.issues.map((i) => ({ ...i, path: `${path}.${i.path}` })),
          );
        }
        try {
          explain(error, fields.locationCode);
        } catch (explained) {
          if (explained instanceof ProblemError) {
            throw problem(explained.code, `${path} (${fields.locationCode}): ${explained.message}`);
          }
          throw explained;
        }
      }
      // Outside the try: a child's refusal already names its own path, once.
      const id = dealers[dealers.length - 1]!.id;
      for (const [i, child] of (children ?? []).entries()) await visit(child, id, `${path}.children.${i}`);
    };
    for (const [i, node] of nodes.entries()) await visit(node, undefined, `dealers.${i}`);
    // An import may hold tens of thousands of profiles: the entry names the first ones only, so
    // one entry (and a page of 500 of them) stays small.
    const codes = dealers.map((d) => d.locationCode);
    await deps.audit.record(
      {
        action: 'dealers.imported',
        details: {
          created,
          updated,
          unchanged,
          locationCodes: codes.slice(0, IMPORT_CODES_RECORDED),
          ...(codes.length > IMPORT_CODES_RECORDED
            ? { moreLocationCodes: codes.length - IMPORT_CODES_RECORDED }
            : {}),
        },
      },
      ctx,
      tx,
    );
  });
  return { created, updated, unchanged, dealers };
}

interface DealerDeps {
  db: Db;
  dealers: DealerStore;
  audit: AuditStore;
  /** Who sees what: a move's impact on partners is shown before it is made. */
  partners: Pick<PartnerStore, 'list'>;
}

/**
 * Which partners would gain or lose a profile if it moved under the profile of `parentLocationCode`
 * (none: the top level). Reads only; the move itself is a PATCH.
 */
async function previewMove(deps: DealerDeps, id: string, parentLocationCode: string | undefined) {
  const parentId = await resolveParent(deps, { locationCode: '', parentLocationCode }, deps.db);
  const [tree, partners] = await Promise.all([deps.dealers.list(null), deps.partners.list()]);
  return moveImpact(tree, partners, id, parentId);
}

/** The operator's dealer-profile use cases, over the dealer store and the audit log. */
export function dealerAdmin(deps: DealerDeps) {
  return {
    create: (input: NewDealer, ctx: AuditContext) => createDealer(deps, input, ctx),
    update: (id: string, patch: Partial<NewDealer>, ctx: AuditContext) => updateDealer(deps, id, patch, ctx),
    importTree: (nodes: DealerTreeNode[], ctx: AuditContext) => importDealers(deps, nodes, ctx),
    list: () => deps.dealers.list(null),
    get: (id: string) => deps.dealers.get(id),
    moveImpact: (id: string, parentLocationCode: string | undefined) =>
      previewMove(deps, id, parentLocationCode),
  };
}

export type DealerAdmin = ReturnType<typeof dealerAdmin>;
