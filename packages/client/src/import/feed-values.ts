/**
 * Words of a feed that stand for something other than a value of their field, read here rather
 * than refused with no hint: a price "on request", and a bi-fuel car's two fuels.
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

const PETROL = new Set(['benzine', 'benzin', 'petrol', 'essence', 'gasoline', 'super', 'ess']);
const LPG = new Set(['lpg', 'autogas', 'gpl']);
const CNG = new Set(['cng', 'aardgas', 'gnc', 'gaz naturel', 'erdgas']);

/**
 * A bi-fuel car's fuel: `Benzine/LPG`, `LPG/Benzine`, `Petrol + LPG`, `Essence/GPL` run on LPG as
 * well as petrol, and marketplaces list them by their gas: `lpg`; `Benzine/CNG` and the like are
 * `cng`. Undefined for anything else (sent as it is: the service knows single fuels).
 */
export function biFuel(cell: string): 'lpg' | 'cng' | undefined {
  const parts = cell
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/\s*(?:\/|\+|&|\bmet\b|\ben\b|\bet\b)\s*/)
    .map((part) => part.replace(/[\s_-]+/g, ' ').trim())
    .filter(Boolean);
  if (parts.length !== 2) return undefined;
  const petrol = parts.filter((p) => PETROL.has(p)).length;
  if (petrol !== 1) return undefined;
  const gas = parts.find((p) => !PETROL.has(p))!;
  if (LPG.has(gas)) return 'lpg';
  if (CNG.has(gas)) return 'cng';
  return undefined;
}
