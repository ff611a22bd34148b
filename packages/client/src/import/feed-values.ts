/**
 * Words of a feed that stand for something other than a value of their field, read here rather
 * than refused with no hint: a price "on request". (A bi-fuel car's `Benzine/LPG` is sent as
 * written: the service's fuel aliases read it, src/domain/enums.ts.)
 */

/** What dealer systems write in the price column of a car without a public price. */
const ON_REQUEST = new Set([
  'prijs op aanvraag',
  'op aanvraag',
  'prijs opvraag',
  'prix sur demande',
  'sur demande',
  'prix sur simple demande',
  'price on request',
  'on request',
  'price on application',
  'poa',
  'p.o.a.',
  'p.o.a',
  'n.o.t.k.',
]);

/** Whether a price cell says "price on request" (`Prijs op aanvraag`, `Prix sur demande`, `POA`). */
export function isPriceOnRequest(cell: string): boolean {
  return ON_REQUEST.has(
    cell.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim(),
  );
}

/** The reason the report gives for a price-on-request row (it is imported, as a draft). */
export const PRICE_ON_REQUEST_NOTE =
  'price on request: imported as a draft without a price (a draft is not shown for sale); send a price to publish it';
