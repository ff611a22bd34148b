import { randomUUID } from 'node:crypto';
import type { Projection, Queryable } from './db.js';

export interface DealerInput {
  locationCode: string;
  parentId?: string | null | undefined;
  companyName?: string | null | undefined;
  fullName?: string | null | undefined;
  displayName?: string | null | undefined;
  email?: string | null | undefined;
  phone?: string | null | undefined;
  address?: string | null | undefined;
  postalCode?: string | null | undefined;
  city?: string | null | undefined;
  province?: string | null | undefined;
  logoUrl?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

interface DealerSummary {
  id: string;
  locationCode: string;
  companyName: string | null;
  fullName: string | null;
  displayName: string | null;
}

export interface Dealer extends DealerSummary {
  parentId: string | null;
  email: string | null;
  phone: string | null;
  address: string | null;
  postalCode: string | null;
  city: string | null;
  province: string | null;
  logoUrl: string | null;
  metadata: Record<string, unknown>;
  parent: DealerSummary | null;
  updatedAt: string;
}

/** Columns of a profile `d` and its parent `p`, as rowToDealer expects them. */
const DEALER_COLUMNS = `d.id, d.parent_id, d.location_code, d.company_name, d.full_name, d.display_name,
  d.email, d.phone, d.address, d.postal_code, d.city, d.province, d.logo_url, d.metadata, d.updated_at,
  p.location_code AS p_location_code, p.company_name AS p_company_name, p.full_name AS p_full_name,
  p.display_name AS p_display_name`;

type DealerRow = Record<string, unknown>;

export function rowToDealer(row: DealerRow, prefix = ''): Dealer {
  const col = (name: string) => row[prefix + name] as string | null;
  const parentId = col('parent_id');
  return {
    id: col('id') as string,
    parentId,
    locationCode: col('location_code') as string,
    companyName: col('company_name'),
    fullName: col('full_name'),
    displayName: col('display_name'),
    email: col('email'),
    phone: col('phone'),
    address: col('address'),
    postalCode: col('postal_code'),
    city: col('city'),
    province: col('province'),
    logoUrl: col('logo_url'),
    metadata: (row[`${prefix}metadata`] as Record<string, unknown>) ?? {},
    parent: parentId
      ? {
          id: parentId,
          locationCode: col('p_location_code') as string,
          companyName: col('p_company_name'),
          fullName: col('p_full_name'),
          displayName: col('p_display_name'),
        }
      : null,
    updatedAt: (row[`${prefix}updated_at`] as Date).toISOString(),
  };
}

/** A dealer profile's text fields and their columns, in the order of the read shape after locationCode. */
export const DEALER_TEXT_COLUMNS = [
  ['companyName', 'company_name'],
  ['fullName', 'full_name'],
  ['displayName', 'display_name'],
  ['email', 'email'],
  ['phone', 'phone'],
  ['address', 'address'],
  ['postalCode', 'postal_code'],
  ['city', 'city'],
  ['province', 'province'],
  ['logoUrl', 'logo_url'],
] as const;

/** The order of GET /locations: display name (or code) case-insensitively, then id. */
const SORT_KEY = 'lower(coalesce(d.display_name, d.location_code))';
/**
 * The columns `search` looks in (docs/contract.md#locations: company, full and display name, city,
 * province, code).
 */
const SEARCHED = ['company_name', 'full_name', 'display_name', 'city', 'province', 'location_code'];

/** A place in the GET /locations order. */
export interface DealerPosition {
  key: string;
  id: string;
}

/** The WHERE condition of "among these ids (null: all), matching this search", adding its parameters. */
function matching(ids: readonly string[] | null, search: string | undefined, params: unknown[]): string {
  params.push(ids);
  let where = `($${params.length}::uuid[] IS NULL OR d.id = ANY($${params.length}::uuid[]))`;
  if (search) {
    // Both sides lower-cased by the database: JavaScript's toLowerCase differs from lower() on
    // some letters ("İ"), and an exact name could then not be found.
    params.push(search);
    where += ` AND (${SEARCHED.map((c) => `strpos(lower(coalesce(d.${c}, '')), lower($${params.length}::text)) > 0`).join(' OR ')})`;
  }
  return where;
}

const SELECT_DEALER = `SELECT ${DEALER_COLUMNS} FROM dealer_profiles d LEFT JOIN dealer_profiles p ON p.id = d.parent_id`;
const AS_DEALER: Projection<Dealer> = { columns: DEALER_COLUMNS, read: (row) => rowToDealer(row) };

export function dealerStore(db: Queryable) {
  return {
    async create(input: DealerInput & { parentId: string | null }, tx: Queryable = db): Promise<Dealer> {
      const id = randomUUID();
      await tx.query(
        'InsertDealer',
        `INSERT INTO dealer_profiles (id, parent_id, location_code, ${DEALER_TEXT_COLUMNS.map(([, c]) => c).join(', ')}, metadata)
         VALUES ($1, $2, $3, ${DEALER_TEXT_COLUMNS.map((_, i) => `$${i + 4}`).join(', ')}, $${DEALER_TEXT_COLUMNS.length + 4})`,
        [
          id,
          input.parentId,
          input.locationCode,
          ...DEALER_TEXT_COLUMNS.map(([k]) => input[k] ?? null),
          JSON.stringify(input.metadata ?? {}),
        ],
      );
      return (await this.get(id, tx))!;
    },

    /**
     * Applies a patch. A patch that changes nothing writes nothing (updatedAt stays), so a
     * re-imported tree reports its profiles unchanged rather than updated.
     */
    async update(
      id: string,
      patch: Partial<DealerInput>,
      tx: Queryable = db,
    ): Promise<{ dealer: Dealer; changed: boolean } | undefined> {
      const columns: string[] = [];
      const values: string[] = [];
      const params: unknown[] = [id];
      const set = (column: string, value: unknown, cast = '') => {
        params.push(value);
        columns.push(column);
        values.push(`$${params.length}${cast}`);
      };
      if (patch.locationCode !== undefined) set('location_code', patch.locationCode);
      if (patch.parentId !== undefined) set('parent_id', patch.parentId, '::uuid');
      for (const [key, column] of DEALER_TEXT_COLUMNS) if (patch[key] !== undefined) set(column, patch[key]);
      if (patch.metadata !== undefined) set('metadata', JSON.stringify(patch.metadata), '::jsonb');
      const changed = columns.length
        ? (
            await tx.query(
              'UpdateDealer',
              `UPDATE dealer_profiles SET ${columns.map((c, i) => `${c} = ${values[i]}`).join(', ')},
                 updated_at = now()
               WHERE id = $1 AND ROW(${columns.join(', ')}) IS DISTINCT FROM ROW(${values.join(', ')})
               RETURNING id`,
              params,
            )
          ).length > 0
        : false;
      const dealer = await this.get(id, tx);
      return dealer ? { dealer, changed } : undefined;
    },

    async get(id: string, tx: Queryable = db): Promise<Dealer | undefined> {
      const rows = await tx.query<DealerRow>('GetDealer', `${SELECT_DEALER} WHERE d.id = $1`, [id]);
      return rows[0] ? rowToDealer(rows[0]) : undefined;
    },

    /** Like get, and holds the profile's row until the transaction ends (see partners.getForUpdate). */
    async getForUpdate(id: string, tx: Queryable): Promise<Dealer | undefined> {
      // OF d: the parent is the nullable side of the outer join, which cannot be locked.
      const rows = await tx.query<DealerRow>(
        'GetDealerForUpdate',
        `${SELECT_DEALER} WHERE d.id = $1 FOR UPDATE OF d`,
        [id],
      );
      return rows[0] ? rowToDealer(rows[0]) : undefined;
    },

    async list(ids: readonly string[] | null, tx: Queryable = db): Promise<Dealer[]> {
      return (await this.find(ids, {}, tx)).map((r) => r.dealer);
    },

    /**
     * Profiles among `ids` (null: all) in the order of GET /locations (display name, then id),
     * matching `search` (a case-insensitive substring of the searchable fields), strictly after
     * `after` and at most `limit` of them; each with its place in that order, for cursors.
     */
    async find<T = Dealer>(
      ids: readonly string[] | null,
      options: {
        search?: string | undefined;
        after?: DealerPosition | null;
        limit?: number;
        /** What each profile is read as (`d` and its parent `p`); a Dealer by default. */
        projection?: Projection<T>;
      },
      tx: Queryable = db,
    ): Promise<{ dealer: T; id: string; position: DealerPosition }[]> {
      const projection = options.projection ?? (AS_DEALER as unknown as Projection<T>);
      const params: unknown[] = [];
      const clauses = [matching(ids, options.search, params)];
      if (options.after) {
        params.push(options.after.key, options.after.id);
        clauses.push(`(${SORT_KEY}, d.id) > ($${params.length - 1}, $${params.length}::uuid)`);
      }
      if (options.limit !== undefined) params.push(options.limit);
      const rows = await tx.query<DealerRow & { sort_key: string; id: string }>(
        'ListDealers',
        `SELECT ${SORT_KEY} AS sort_key, ${projection.columns}, d.id
         FROM dealer_profiles d LEFT JOIN dealer_profiles p ON p.id = d.parent_id WHERE ${clauses.join(' AND ')}
         ORDER BY ${SORT_KEY}, d.id${options.limit !== undefined ? ` LIMIT $${params.length}` : ''}`,
        params,
      );
      return rows.map((r) => ({
        dealer: projection.read(r),
        id: r.id,
        position: { key: r.sort_key, id: r.id },
      }));
    },

    /** How many profiles among `ids` (null: all) match `search`. */
    async countMatching(ids: readonly string[] | null, search: string | undefined, tx: Queryable = db) {
      const params: unknown[] = [];
      const rows = await tx.query<{ n: number }>(
        'CountDealers',
        `SELECT count(*)::bigint AS n FROM dealer_profiles d WHERE ${matching(ids, search, params)}`,
        params,
      );
      return rows[0]!.n;
    },

    /** Ids of profiles with these location codes (matched case-insensitively), keyed by lower-case code. */
    async idsByCodes(codes: readonly string[], tx: Queryable = db): Promise<Map<string, string>> {
      if (codes.length === 0) return new Map();
      const rows = await tx.query<{ id: string; code: string }>(
        'DealerIdsByCodes',
        'SELECT id, lower(location_code) AS code FROM dealer_profiles WHERE lower(location_code) = ANY($1::text[])',
        [codes.map((c) => c.toLowerCase())],
      );
      return new Map(rows.map((r) => [r.code, r.id]));
    },

    /** Which of these ids exist. */
    async existing(ids: readonly string[], tx: Queryable = db): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await tx.query<{ id: string }>(
        'ExistingDealers',
        'SELECT id FROM dealer_profiles WHERE id = ANY($1::uuid[])',
        [ids],
      );
      return new Set(rows.map((r) => r.id));
    },

    /** The given profiles and every descendant, at any depth. */
    async subtree(rootIds: readonly string[], tx: Queryable = db): Promise<string[]> {
      if (rootIds.length === 0) return [];
      const rows = await tx.query<{ id: string }>(
        'DealerSubtree',
        `WITH RECURSIVE tree(id) AS (
           SELECT id FROM dealer_profiles WHERE id = ANY($1::uuid[])
           UNION
           SELECT d.id FROM dealer_profiles d JOIN tree t ON d.parent_id = t.id
         )
         SELECT id FROM tree`,
        [rootIds],
      );
      return rows.map((r) => r.id);
    },

    /** Direct children of a profile, or the top-level profiles when parentId is null. */
    async children(parentIds: readonly string[] | null, tx: Queryable = db): Promise<string[]> {
      const rows = await tx.query<{ id: string }>(
        'DealerChildren',
        parentIds === null
          ? 'SELECT id FROM dealer_profiles WHERE parent_id IS NULL'
          : 'SELECT id FROM dealer_profiles WHERE parent_id = ANY($1::uuid[])',
        parentIds === null ? [] : [parentIds],
      );
      return rows.map((r) => r.id);
    },
  };
}

export type DealerStore = ReturnType<typeof dealerStore>;
