import type { Projection } from '../db.js';
import { DEALER_TEXT_COLUMNS } from '../dealers.js';
import { LISTING_FIELDS } from './columns.js';

/**
 * A listing's read shape as JSON text built by the database, in two forms.
 *
 * - Fresh (`listingJsonSql`): built from the columns at read time. Pages no longer send it; it is
 *   the reference the read model is checked against (store/read-model.ts, `forecourt check
 *   read-model`, test/read-model.test.ts), and what migration 011 wrote its builder from.
 * - Stored (`readModelProjection`): the read model of migration 011. What depends only on the
 *   listing is kept with it (`listings.read_json`: title through features; `read_json_tail`:
 *   the timestamps and the closing brace), what depends only on the dealer is kept with the dealer
 *   (`dealer_profiles.read_json`); a page splices them with the few values that depend on
 *   something else: listingUrl (configuration), externalProvider (the partner's name, which an
 *   operator may change), and id, slug and the reference, which cost nothing to write out.
 *
 * Keys come in the order given (the response schema's, as the serializer writes them); values are
 * formatted as listingView formats them (timestamps as toISOString does, to the millisecond; a
 * numeric as a JSON number), and the tests hold both to the same output (test/listing-json.test.ts).
 * Everything is compact, as JSON.stringify writes it: json_build_object and json_agg would write
 * `"city" : "Gent"` in every nested object, so nested objects are concatenated too.
 * Reads `l` (listings), `pa` (partners), `d` and `p` (the dealer and its parent): LISTING_JOINS.
 */

/** A timestamp as Date.toISOString writes it: UTC, milliseconds (truncated, as a JS Date holds them). */
export function isoTime(sql: string): string {
  return `to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A string as an SQL literal (the base URL is configuration, but quoted all the same). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A JSON value as text, or null: `concat` then leaves a NULL out, `coalesce` writes `null`. */
const json = (sql: string) => `to_json(${sql})::text`;
const orNull = (sql: string) => `coalesce(${json(sql)}, 'null')`;

/** `{"key":value,...}` from pairs of (key, JSON text expression). */
const object = (pairs: readonly (readonly [string, string])[]) =>
  `concat(${pairs.map(([key, value], i) => `'${i ? ',' : '{'}"${key}":', ${value}`).join(', ')}, '}')`;

/**
 * Where the builder reads a listing's values, by column name: the row `l` as stored, or, in a
 * write statement, the values that statement writes (store/listings/writes.ts), so that the
 * writer stores the text it computed set-based and the row trigger has nothing left to do.
 */
export type ListingSource = (column: string) => string;
const stored: ListingSource = (name) => `l.${name}`;

const column = new Map<string, (typeof LISTING_FIELDS)[number]>(LISTING_FIELDS.map((f) => [f[0], f]));
const value = (field: string, src: ListingSource): string => {
  const [, name, kind] = column.get(field)!;
  return kind === 'numeric' ? `${src(name)}::float8` : src(name);
};

/** The values that are not a column's: each a JSON text expression. */
function special(listingBaseUrl: string, dealer: string, src: ListingSource): Record<string, string> {
  return {
    id: json(src('id')),
    slug: json(src('slug')),
    listingUrl: json(`${literal(`${listingBaseUrl}/`)} || ${src('slug')}`),
    dealerProfileId: json(src('dealer_profile_id')),
    externalReference: json(src('external_reference')),
    externalProvider: json('pa.name'),
    status: json(src('status')),
    location: object(
      ['postalCode', 'city', 'province', 'latitude', 'longitude'].map(
        (f) => [f, orNull(value(f, src))] as const,
      ),
    ),
    images: `(SELECT coalesce('[' || string_agg(concat('{"url":', ${json('i.url')}, ',"position":', i.n - 1, '}'), ',' ORDER BY i.n) || ']', '[]')
      FROM jsonb_array_elements_text(${src('images')}) WITH ORDINALITY AS i(url, n))`,
    mainImageUrl: orNull(`${src('images')}->>0`),
    features: `(SELECT coalesce('[' || string_agg(concat('{"category":', ${orNull("f.v->>'category'")}, ',"name":', ${orNull("f.v->>'name'")}, '}'), ',' ORDER BY f.n) || ']', '[]')
      FROM jsonb_array_elements(${src('features')}) WITH ORDINALITY AS f(v, n))`,
    dealer,
    createdAt: json(isoTime(src('created_at'))),
    updatedAt: json(isoTime(src('updated_at'))),
  };
}

// Shown only when there is one: a pair with its comma, or nothing.
const optional = (src: ListingSource): Record<string, string> => ({
  historyReportUrl: src('history_report_url'),
  soldAt: isoTime(src('sold_at')),
});

/**
 * The pairs of these keys, each with its leading comma (`,"title":"..."`): concat() arguments.
 * `dealer` is the dealer object's JSON text expression.
 */
function pairs(keys: readonly string[], listingBaseUrl: string, dealer: string, src = stored): string[] {
  const values = special(listingBaseUrl, dealer, src);
  const optionals = optional(src);
  return keys.flatMap((key) => {
    const name = `',"${key}":'`;
    if (key in optionals) return [`${name} || ${json(optionals[key]!)}`];
    const sql = values[key] ?? (column.has(key) ? orNull(value(key, src)) : undefined);
    if (sql === undefined) throw new Error(`listingJsonSql: no column for the field "${key}"`);
    return [name, sql];
  });
}

/** concat() takes at most 100 arguments: longer lists go in groups. */
function concat(args: readonly string[]): string {
  const groups: string[] = [];
  for (let i = 0; i < args.length; i += 90) groups.push(`concat(${args.slice(i, i + 90).join(',\n')})`);
  return groups.length === 1 ? groups[0]! : `concat(${groups.join(', ')})`;
}

/** The whole document, built from the columns now (the reference; `dealer` as DEALER_JSON by default). */
export function listingJsonSql(
  listingBaseUrl: string,
  keys: readonly string[],
  dealer = DEALER_JSON,
): string {
  // The first pair's comma becomes the opening brace.
  return `('{' || substr(${concat([...pairs(keys, listingBaseUrl, dealer), "'}'"])}, 2))`;
}

/** Where the read model cuts the schema's keys: spliced at read time, kept with the listing, the dealer's. */
const HEAD = ['id', 'slug', 'listingUrl', 'dealerProfileId', 'externalReference', 'externalProvider'];
const TAIL = ['createdAt', 'updatedAt', 'soldAt'];

/** The schema's keys cut where the read model cuts them; throws when they no longer fit its layout. */
export function readModelLayout(keys: readonly string[]): { body: string[]; tail: string[] } {
  const dealer = keys.indexOf('dealer');
  const head = keys.slice(0, HEAD.length);
  const tail = keys.slice(dealer + 1);
  if (dealer < 0 || head.join() !== HEAD.join() || tail.join() !== TAIL.join()) {
    // A new key order means new stored text: a migration that redefines listing_read_json and
    // rewrites every row (docs/operations.md, "The read model").
    throw new Error(`the read model's layout no longer fits the listing schema's keys: ${keys.join(',')}`);
  }
  return { body: keys.slice(HEAD.length, dealer), tail };
}

/** What `listings.read_json` holds, built fresh: `,"title":...,"features":[...]` (from `src`: the row by default). */
export function listingBodySql(keys: readonly string[], src = stored): string {
  return concat(pairs(readModelLayout(keys).body, '', 'NULL', src));
}

/** What `listings.read_json_tail` holds, built fresh: `,"createdAt":"...","updatedAt":"..."}`. */
export function listingTailSql(keys: readonly string[], src = stored): string {
  return concat([...pairs(readModelLayout(keys).tail, '', 'NULL', src), "'}'"]);
}

/** A dealer as JSON text (what `dealer_profiles.read_json` holds), from `d` and its parent `p`. */
export const DEALER_JSON = object([
  ['id', json('d.id')],
  ['parentId', orNull('d.parent_id')],
  ...([['locationCode', 'location_code'], ...DEALER_TEXT_COLUMNS] as const).map(
    ([key, name]) => [key, orNull(`d.${name}`)] as const,
  ),
  // json_compact (migration 011): jsonb's own text puts a space after every colon and comma.
  ['metadata', `json_compact(coalesce(d.metadata, '{}'::jsonb))`],
  [
    'parent',
    `CASE WHEN d.parent_id IS NULL THEN 'null' ELSE ${object([
      ['id', json('d.parent_id')],
      ['locationCode', orNull('p.location_code')],
      ['companyName', orNull('p.company_name')],
      ['fullName', orNull('p.full_name')],
      ['displayName', orNull('p.display_name')],
    ])} END`,
  ],
]);

/** A listing as the database wrote its JSON, with its dealer for the scope check. */
export interface ListingJson {
  json: string;
  dealerId: string;
}

/**
 * Reads listings as their finished JSON from the read model: the stored texts spliced with what
 * depends on configuration or on the partner's name, no JSON built per row (docs/benchmarks.md).
 */
export function listingJsonProjection(
  listingBaseUrl: string,
  keys: readonly string[],
): Projection<ListingJson> {
  readModelLayout(keys);
  const head = HEAD.map((key) => special(listingBaseUrl, 'NULL', stored)[key]!);
  const text = `concat('{"id":', ${head[0]}, ',"slug":', ${head[1]}, ',"listingUrl":', ${head[2]},
    ',"dealerProfileId":', ${head[3]}, ',"externalReference":', ${head[4]}, ',"externalProvider":', ${head[5]},
    l.read_json, ',"dealer":', d.read_json, l.read_json_tail)`;
  return {
    columns: `${text} AS json, l.dealer_profile_id AS json_dealer`,
    // The dealer's parent is in the dealer's text already.
    joins: `JOIN partners pa ON pa.id = l.partner_id JOIN dealer_profiles d ON d.id = l.dealer_profile_id`,
    read: (row) => ({ json: row.json as string, dealerId: row.json_dealer as string }),
  };
}

/** The same document built fresh from the columns (listingJsonSql): the reference, for tests and checks. */
export function freshListingJsonProjection(
  listingBaseUrl: string,
  keys: readonly string[],
): Projection<ListingJson> {
  return {
    columns: `${listingJsonSql(listingBaseUrl, keys)} AS json, l.dealer_profile_id AS json_dealer`,
    read: (row) => ({ json: row.json as string, dealerId: row.json_dealer as string }),
  };
}
