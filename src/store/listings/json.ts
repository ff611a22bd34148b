import type { Projection } from '../db.js';
import { DEALER_TEXT_COLUMNS } from '../dealers.js';
import { LISTING_FIELDS } from './columns.js';

/**
 * A listing's read shape (docs/contract.md#one-listing), owned here and nowhere else: its keys in
 * the order partners read them (LISTING_KEYS) and the SQL that writes each value as JSON text.
 * Everything that shows a listing is built from this module:
 *
 * - The read model. What depends only on the listing is kept with it (`listings.read_json`:
 *   title through features; `read_json_tail`: the timestamps and the closing brace), what depends
 *   only on the dealer is kept with the dealer (`dealer_profiles.read_json`). The store's writes
 *   compute the text with listingBodySql and listingTailSql; the triggers' functions, for every
 *   other writer, are the same expressions, installed by a migration generated from this module
 *   (readModelFunctionsSql; test/unit/read-model-sql.test.ts holds the newest such migration to it,
 *   test/read-model.test.ts the database's installed functions).
 * - Every answer that shows a listing (pages, single reads, the ETag, webhook deliveries):
 *   listingJsonProjection splices the stored texts with the few values that depend on something
 *   else: listingUrl (configuration), externalProvider (the partner's name, which an operator may
 *   change), and id, slug and the reference, which cost nothing to write out.
 * - The fresh build (listingJsonSql): the whole document from the columns now, the reference the
 *   read model is checked against (store/read-model.ts, `forecourt check read-model`).
 *
 * The API's response schema (listingSchema) describes these keys in this order for validation and
 * the OpenAPI document; test/listing-json.test.ts holds the two together.
 * Timestamps are written as Date.toISOString writes them (to the millisecond), a numeric as a JSON
 * number. Everything is compact, as JSON.stringify writes it: json_build_object and json_agg would
 * write `"city" : "Gent"` in every nested object, so nested objects are concatenated too.
 * Reads `l` (listings), `pa` (partners), `d` and `p` (the dealer and its parent): LISTING_JOINS.
 */

/** Spliced at read time (listingJsonProjection). */
const HEAD = [
  'id',
  'slug',
  'listingUrl',
  'dealerProfileId',
  'externalReference',
  'externalProvider',
] as const;
/** Kept with the listing: `listings.read_json`. */
const BODY = [
  'title',
  'description',
  'status',
  'price',
  'currency',
  'brand',
  'model',
  'variant',
  'year',
  'mileage',
  'fuelType',
  'transmission',
  'bodyType',
  'color',
  'interiorColor',
  'interiorMaterial',
  'paintType',
  'doors',
  'seats',
  'gears',
  'previousOwners',
  'powerKw',
  'co2Emission',
  'co2Type',
  'emissionClass',
  'firstRegistration',
  'driveType',
  'weight',
  'fuelConsumption',
  'serviceHistory',
  'warranty',
  'warrantyMonths',
  'vehicleType',
  'conditionTags',
  'engine',
  'vin',
  'historyReportUrl',
  'location',
  'images',
  'mainImageUrl',
  'features',
  'readiness',
] as const;
/** Kept with the listing after the dealer: `listings.read_json_tail`, the closing brace included. */
const TAIL = ['createdAt', 'updatedAt', 'soldAt'] as const;

/**
 * Spliced at read time after the dealer: the sync position (migration 021), which a change of the
 * service's moves without the listing's stored text being written for it.
 */
const CHANGED = ['changedAt'] as const;

/** Every key of a listing as partners read it, in order; `dealer` is kept with the dealer. */
export const LISTING_KEYS = [...HEAD, ...BODY, 'dealer', ...CHANGED, ...TAIL] as const;

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
  `concat(${pairs.map(([key, value], i) => `'${i ? ',' : '{'}"${key}":', ${value}`).join(',\n')}, '}')`;

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

/** Fields the read shape nests under `location` rather than showing flat. */
const LOCATION = ['postalCode', 'city', 'province', 'latitude', 'longitude'];

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
    location: object(LOCATION.map((f) => [f, orNull(value(f, src))] as const)),
    images: `(SELECT coalesce('[' || string_agg(concat('{"url":', ${json('i.url')}, ',"position":', i.n - 1, ',"check":', ${IMAGE_CHECK_JSON}, '}'), ',' ORDER BY i.n) || ']', '[]')
      FROM jsonb_array_elements_text(${src('images')}) WITH ORDINALITY AS i(url, n))`,
    mainImageUrl: orNull(`${src('images')}->>0`),
    features: `(SELECT coalesce('[' || string_agg(concat('{"category":', ${orNull("f.v->>'category'")}, ',"name":', ${orNull("f.v->>'name'")}, '}'), ',' ORDER BY f.n) || ']', '[]')
      FROM jsonb_array_elements(${src('features')}) WITH ORDINALITY AS f(v, n))`,
    readiness: readinessSql(src),
    dealer,
    createdAt: json(isoTime(src('created_at'))),
    updatedAt: json(isoTime(src('updated_at'))),
    changedAt: json(isoTime(src('changed_at'))),
  };
}

/** An image's check before its first result. */
const PENDING_CHECK = `'{"state":"pending","checkedAt":null,"format":null,"width":null,"height":null,"bytes":null,"contentType":null,"problem":null}'`;

/**
 * The check of the image `i.url` (docs/images.md): its row in image_checks, looked up by its key;
 * a URL without one (its writer's own transaction has not enqueued it yet) is pending.
 *
 * Looked up one URL at a time (a subquery per image), never joined: a listing's images come from
 * jsonb_array_elements_text, which the planner takes for 100 rows, so past some 20,000 checks it
 * hashed a scan of the whole table for every listing written (1 s for a bulk of 100 instead of
 * 0.2, and a prepared write kept that plan; docs/benchmarks.md, "The cost of a write").
 */
const IMAGE_CHECK_JSON = `coalesce((SELECT CASE WHEN c.state = 'pending' THEN ${PENDING_CHECK} ELSE ${object([
  ['state', json('c.state')],
  ['checkedAt', orNull(isoTime('c.checked_at'))],
  ['format', orNull('c.format')],
  ['width', orNull('c.width')],
  ['height', orNull('c.height')],
  ['bytes', orNull('c.bytes')],
  ['contentType', orNull('c.content_type')],
  [
    'problem',
    `CASE WHEN c.problem_code IS NULL THEN 'null' ELSE ${object([
      ['code', json('c.problem_code')],
      ['message', orNull('c.problem_message')],
    ])} END`,
  ],
])} END FROM image_checks c WHERE c.url = i.url), ${PENDING_CHECK})`;

/** A reason a listing is not live, as JSON text (docs/images.md, "Readiness"). */
const reason = (code: string, message: string) => `'{"code":"${code}","message":${JSON.stringify(message)}}'`;

/**
 * A listing's readiness: live when nothing stands in the way; else every reason, in this order.
 * `not_active`: its status is not active. `no_price`: no price. `no_images`: no image at all.
 * `images_pending`: no image ok yet, some not checked yet. `no_working_image`: every image
 * checked and none ok.
 *
 * Each image's check is looked up once: without the OFFSET 0 the planner pulls the subquery up
 * and copies the look-up into each of the three counts, three index scans per image (a bulk of
 * 100 new listings on the embedded database spent 5 % of its insert on the two extra).
 */
function readinessSql(src: ListingSource): string {
  const reasons = `concat_ws(',',
      CASE WHEN ${src('status')} <> 'active' THEN concat('{"code":"not_active","message":', to_json('the status is ' || ${src('status')} || ', not active')::text, '}') END,
      CASE WHEN ${src('price')} IS NULL THEN ${reason('no_price', 'the listing has no price')} END,
      CASE WHEN s.n = 0 THEN ${reason('no_images', 'the listing has no image')}
        WHEN s.ok = 0 AND s.pending > 0 THEN ${reason('images_pending', 'no image is known to work yet: some are still being checked')}
        WHEN s.ok = 0 THEN ${reason('no_working_image', 'no image works: each one is broken (see each image’s check)')} END)`;
  return `(SELECT concat('{"live":', CASE WHEN r.reasons = '' THEN 'true' ELSE 'false' END, ',"reasons":[', r.reasons, ']}')
      FROM (SELECT ${reasons} AS reasons
        FROM (SELECT count(*) AS n, count(*) FILTER (WHERE c.state = 'ok') AS ok,
            count(*) FILTER (WHERE c.state IS NULL OR c.state = 'pending') AS pending
          FROM (SELECT (SELECT c.state FROM image_checks c WHERE c.url = i.url) AS state
            FROM jsonb_array_elements_text(${src('images')}) AS i(url) OFFSET 0) c) s) r)`;
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
    if (sql === undefined) throw new Error(`the read shape has no value for the key "${key}"`);
    return [name, sql];
  });
}

/** concat() takes at most 100 arguments: longer lists go in groups. */
function concat(args: readonly string[]): string {
  const groups: string[] = [];
  for (let i = 0; i < args.length; i += 90) groups.push(`concat(${args.slice(i, i + 90).join(',\n')})`);
  return groups.length === 1 ? groups[0]! : `concat(${groups.join(', ')})`;
}

/** The whole document, built from the columns now: the reference the read model is checked against. */
export function listingJsonSql(listingBaseUrl: string): string {
  // The first pair's comma becomes the opening brace.
  return `('{' || substr(${concat([...pairs(LISTING_KEYS, listingBaseUrl, DEALER_JSON), "'}'"])}, 2))`;
}

/** What `listings.read_json` holds, built fresh: `,"title":...,"features":[...]` (from `src`: the row by default). */
export function listingBodySql(src = stored): string {
  return concat(pairs(BODY, '', 'NULL', src));
}

/**
 * The readiness object (JSON text) in the stored body of listing `alias`: the body's last key
 * (BODY), so a statement that locks or writes the row reads it back without building it again.
 * Null when the text has none.
 */
export const storedReadinessSql = (alias = 'l') =>
  `substring(${alias}.read_json FROM ',"readiness":(\\{"live":.*\\})$')`;

/** What `listings.read_json_tail` holds, built fresh: `,"createdAt":"...","updatedAt":"..."}`. */
export function listingTailSql(src = stored): string {
  return concat([...pairs(TAIL, '', 'NULL', src), "'}'"]);
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
export function listingJsonProjection(listingBaseUrl: string): Projection<ListingJson> {
  // The first pair's comma becomes the opening brace.
  const [first, ...head] = pairs(HEAD, listingBaseUrl, 'NULL');
  const text = concat([
    `'{${first!.slice(2)}`,
    ...head,
    'l.read_json',
    `',"dealer":'`,
    'd.read_json',
    ...pairs(CHANGED, listingBaseUrl, 'NULL'),
    'l.read_json_tail',
  ]);
  return {
    columns: `${text} AS json, l.dealer_profile_id AS json_dealer`,
    // The dealer's parent is in the dealer's text already.
    joins: `JOIN partners pa ON pa.id = l.partner_id JOIN dealer_profiles d ON d.id = l.dealer_profile_id`,
    read: (row) => ({ json: row.json as string, dealerId: row.json_dealer as string }),
  };
}

/** The lines that open and close readModelFunctionsSql's text in a migration. */
export const GENERATED_BEGIN = '-- generated: begin (readModelFunctionsSql, src/store/listings/json.ts)';
export const GENERATED_END = '-- generated: end';

/**
 * The read model's trigger functions as a migration installs them: the same expressions the
 * store's writes and the check use, for every writer that leaves the text out (migration 011 has
 * the triggers and says when they fire). `npm run read-model:sql` writes it into a migration; a
 * change of the shape is a new migration with this text and a rewrite of the rows
 * (docs/operations.md, "The read model").
 */
export function readModelFunctionsSql(): string {
  // Continuation lines indented under their statement (no SQL literal here spans lines).
  const indent = (sql: string) => sql.replaceAll('\n', '\n      ');
  return `${GENERATED_BEGIN}
-- A dealer as the \`dealer\` object of a listing shows it, its parent's summary included.
CREATE OR REPLACE FUNCTION dealer_profiles_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d ALIAS FOR NEW;
BEGIN
  SELECT ${indent(DEALER_JSON)}
  INTO NEW.read_json
  FROM (VALUES (1)) AS one(x) LEFT JOIN dealer_profiles p ON p.id = d.parent_id;
  RETURN NEW;
END $$;

-- A listing: each part computed when its writer left it out (NULL, or on UPDATE unchanged).
CREATE OR REPLACE FUNCTION listings_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l ALIAS FOR NEW;
BEGIN
  IF NEW.read_json IS NULL OR (TG_OP = 'UPDATE' AND NEW.read_json = OLD.read_json) THEN
    NEW.read_json := ${indent(listingBodySql())};
  END IF;
  IF NEW.read_json_tail IS NULL OR (TG_OP = 'UPDATE' AND NEW.read_json_tail = OLD.read_json_tail) THEN
    NEW.read_json_tail := ${indent(listingTailSql())};
  END IF;
  RETURN NEW;
END $$;
${GENERATED_END}
`;
}
