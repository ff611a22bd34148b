import fc from 'fast-check';
import type { Case } from './cases.js';
import { describedEnum, type Operation, type Schema } from './document.js';
import { type Overrides, textOf, valid } from './schema-arbitrary.js';
import { DEALERS, WRITER_REFS, WRITER_SCOPE } from './world.js';

/**
 * Listing writes that are valid by every documented rule, not only by the schema: the rules
 * docs/contract.md#validation states in prose (year range, price > 0 with two decimals,
 * firstRegistration not in the future, VIN alphabet, history-report hosts, image URLs,
 * enumerations) come in as overrides.
 * Their dealer is drawn from the whole tree, so the expected answer is known in advance: written
 * when the dealer is in the writer's scope (or none is named), 403 PROFILE_FORBIDDEN when not.
 */

const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 5 });
const today = new Date();
const yesterday = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - 1));
const url = fc
  .tuple(fc.constantFrom('https', 'http'), fc.nat({ max: 99_999 }))
  .map(([scheme, n]) => `${scheme}://img.example/cars/${n}.jpg`);

const rules: Record<string, fc.Arbitrary<unknown>> = {
  // A text with something in it once trimmed (title: 1 to 200 characters after trimming).
  title: textOf(1, 200).filter((t) => t.trim().length > 0),
  price: fc.oneof(
    fc.integer({ min: 1, max: 10_000_000 }),
    fc.integer({ min: 1, max: 999_999_999 }).map((n) => n / 100),
  ),
  currency: fc.constantFrom('EUR', 'eur', null),
  year: nullable(fc.integer({ min: 1900, max: today.getUTCFullYear() + 1 })),
  co2Emission: nullable(fc.integer({ min: 0, max: 1000 })),
  fuelConsumption: nullable(fc.integer({ min: 0, max: 1000 }).map((n) => n / 10)),
  firstRegistration: nullable(
    fc
      .tuple(fc.date({ min: new Date('1950-01-01'), max: yesterday, noInvalidDate: true }), fc.boolean())
      .map(([d, dayToo]) => d.toISOString().slice(0, dayToo ? 10 : 7)),
  ),
  vin: nullable(fc.stringMatching(/^[A-HJ-NPR-Z0-9]{17}$/).map((v) => v.toLowerCase())),
  historyReportUrl: nullable(
    fc.oneof(
      fc.nat({ max: 999_999 }).map((n) => `https://www.car-pass.be/report/${n}`),
      fc.stringMatching(/^\d{11}$/),
    ),
  ),
  images: nullable(
    fc.array(
      fc.oneof(
        url,
        url.map((u) => ({ url: u })),
      ),
      { maxLength: 5 },
    ),
  ),
};
/** A clean reference (the rules: 1 to 128 characters, no control characters, no outer spaces). */
const cleanReference = fc.oneof(
  fc.constantFrom(...WRITER_REFS),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ._/-]{0,20}[A-Za-z0-9]$/).map((s) => `fzw-${s}`),
);
rules.externalReference = cleanReference;
rules.external_reference = cleanReference;
for (const alias of ['historyReport', 'history_report_url', 'historyReportNumber'])
  rules[alias] = rules.historyReportUrl!;
// Bodies built on these name a dealer of the writer's own (writeCase draws from the whole tree).
rules.dealerProfileId = fc.constantFrom(...WRITER_SCOPE).map((key) => `⟪dealer:${key}⟫`);
rules.dealerLocationCode = fc.constantFrom(...WRITER_SCOPE).map((key) => `⟪code:${key}⟫`);

/**
 * Overrides for listing bodies: valid values by every rule, invalid ones for the enumerations the
 * document states in prose, and the fields a mutation is not drawn for: a body's reference, which
 * a valid case sets to the reference the write addresses (writeCase) and any other value makes
 * `reference_mismatch`, a rule the document states in prose.
 */
export function listingOverrides(op: Operation): Overrides {
  const overrides: Overrides = {
    valid(path: string, schema: Schema) {
      // A listing always carries a price: the default status (active) requires one.
      if (schema.properties?.title && !schema.required?.includes('price')) {
        return valid({ ...schema, required: [...(schema.required ?? []), 'price'] }, overrides, path);
      }
      const at = path.replace(/^items\[\]\./, '').replace(/^\[\]\./, '');
      if (at in rules) return rules[at];
      // Text is trimmed before its length is judged: a required text must hold more than spaces.
      if (schema.type === 'string' && (schema.minLength ?? 0) > 0) {
        return textOf(schema.minLength, schema.maxLength ?? 200).filter(
          (t) => t.trim().length >= schema.minLength,
        );
      }
      const values = describedEnum(schema);
      if (values) return fc.constantFrom(...values, ...values.map((v) => v.toUpperCase()));
      return undefined;
    },
    invalid(_path: string, schema: Schema) {
      return describedEnum(schema) ? fc.string({ maxLength: 8 }).map((v) => `zz-${v}`) : undefined;
    },
    keep(path: string) {
      const at = path.replace(/^items\[\]\./, '').replace(/^\[\]\./, '');
      return op.id === 'upsertListing' ? /^external_?[rR]eference$/.test(at) : at === 'external_reference';
    },
  };
  return overrides;
}

/** The dealer of a write: none named, by id or by location code, anywhere in the tree. */
const dealer = fc.oneof(
  fc.constant({}),
  fc.constantFrom(...DEALERS).map((key) => ({ dealerProfileId: `⟪dealer:${key}⟫` })),
  fc.constantFrom(...DEALERS).map((key) => ({ dealerLocationCode: `⟪code:${key}:lower⟫` })),
);

const body = (op: Operation, listing: Schema) =>
  fc
    .tuple(valid(listing, listingOverrides(op)) as fc.Arbitrary<Record<string, unknown>>, dealer)
    .map(([fields, named]) => {
      const { dealerProfileId: _id, dealerLocationCode: _code, ...rest } = fields;
      return { ...rest, ...named };
    });

/** Whether a write's dealer is one the writer may use (no dealer named: its own only root, A). */
export function dealerAllowed(item: Record<string, unknown>): boolean {
  const named = String(item.dealerProfileId ?? item.dealerLocationCode ?? '');
  const key = /⟪(?:dealer|code):([A-Za-z0-9]+)/.exec(named)?.[1];
  return key === undefined || WRITER_SCOPE.has(key);
}

export function writeCase(op: Operation): fc.Arbitrary<Case> | undefined {
  const listing =
    op.id === 'upsertListing'
      ? op.body
      : op.id === 'bulkUpsertListings'
        ? { $ref: '#/components/schemas/ListingWrite' }
        : undefined;
  if (!listing) return undefined;
  if (op.id === 'upsertListing') {
    return fc.tuple(cleanReference, body(op, listing)).map(([ref, json]) => ({
      kind: 'write' as const,
      op: op.id,
      method: op.method,
      who: 'writer' as const,
      path: `/listings/${encodeURIComponent(ref)}`,
      query: [],
      json: sameReference(json, ref),
    }));
  }
  const item = fc
    .tuple(cleanReference, body(op, listing))
    .map(([ref, json]) => ({ ...sameReference(json, ref), externalReference: ref }));
  return fc.tuple(fc.array(item, { minLength: 1, maxLength: 20 }), fc.boolean()).map(([items, wrapped]) => ({
    kind: 'write' as const,
    op: op.id,
    method: op.method,
    who: 'writer' as const,
    path: '/listings/bulk-upsert',
    query: [],
    json: wrapped ? { items } : items,
  }));
}

/**
 * A body whose reference names, where it has one, are the reference the write addresses: a body
 * may repeat it, never differ from it (reference_mismatch).
 */
function sameReference(json: Record<string, unknown>, ref: string): Record<string, unknown> {
  const out = { ...json };
  for (const name of ['externalReference', 'external_reference']) if (name in out) out[name] = ref;
  return out;
}
