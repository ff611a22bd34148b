import { randomUUID } from 'node:crypto';
import { listingsQuery } from '../../src/api/external/v1/listings/query-schema.js';
import { locationsQuery } from '../../src/api/external/v1/locations.js';
import type { PartnerAuthentication } from '../../src/domain/authentication.js';
import { listingBodySchema, toListingWrite } from '../../src/domain/listings/input.js';
import type { ListingReads } from '../../src/domain/listings/reads.js';
import type { LocationReads } from '../../src/domain/locations.js';
import { listingJsonProjection } from '../../src/store/listings/json.js';
import type { ListingRow } from '../../src/store/listings/writes.js';
import { locationJsonProjection } from '../../src/store/location-json.js';

/** bench/.data/<db>.json, written by bench/dataset.ts. */
export interface Dataset {
  listings: number;
  globalSecret: string;
  restrictedSecret: string;
  wideSecret: string;
  writerId: string;
}

export type Who = 'global' | 'restricted' | 'wide';
export const secretOf = (d: Dataset, who: Who) =>
  who === 'global' ? d.globalSecret : who === 'restricted' ? d.restrictedSecret : d.wideSecret;

export interface ReadScenario {
  name: string;
  who: Who;
  /** Path below /api/external/v1, with its query. */
  path: string;
  /** What the target compares: the DB limit ratio and p99 apply to list endpoints. */
  kind: 'list' | 'locations';
}

export const READS: ReadScenario[] = [
  { name: 'list-restricted', who: 'restricted', path: '/listings?pageSize=50&status=active', kind: 'list' },
  { name: 'list-global', who: 'global', path: '/listings?pageSize=50&status=active', kind: 'list' },
  {
    name: 'list-global-page-400',
    who: 'global',
    path: '/listings?pageSize=50&status=active&page=400',
    kind: 'list',
  },
  // The cursor path is filled in at run time (a cursor 400 pages deep).
  { name: 'list-global-cursor-400', who: 'global', path: '', kind: 'list' },
  { name: 'locations-500-with-counts', who: 'wide', path: '/locations?withCounts=true', kind: 'locations' },
  // A first full sync's page (every listing since long ago) against the same page without the
  // date: totalItems must not cost a count of every match (issue 17).
  {
    name: 'sync-global-200',
    who: 'global',
    path: '/listings?status=all&updatedSince=2000-01-01T00:00:00Z&pageSize=200',
    kind: 'list',
  },
  { name: 'all-global-200', who: 'global', path: '/listings?status=all&pageSize=200', kind: 'list' },
];

// The routes read listings as JSON built by the database; the base URL only changes a literal.
const LISTING_JSON = listingJsonProjection('https://bench.example/listings');

/**
 * Runs, with use cases over a recording Db, what the service runs for one request: the secret
 * lookup, the partner's subtree, then the route's domain calls with the same parsed query.
 */
export async function requestWork(
  useCases: { authentication: PartnerAuthentication; listings: ListingReads; locations: LocationReads },
  secret: string,
  path: string,
): Promise<void> {
  const { record } = await useCases.authentication.identify(secret).catch(() => {
    throw new Error('bench secret not found: was the dataset loaded into this database?');
  });
  const partner = await useCases.authentication.partnerOf(record, false);
  const url = new URL(path, 'https://x');
  const params = Object.fromEntries(url.searchParams);
  if (url.pathname === '/listings') {
    const query = listingsQuery.parse(params);
    const filter = await useCases.listings.filter(partner, query);
    await useCases.listings.page(filter, query, { projection: LISTING_JSON });
  } else if (url.pathname === '/locations') {
    await useCases.locations.find(partner, locationsQuery.parse(params), locationJsonProjection);
  } else throw new Error(`no domain emulation for ${path}`);
}

/** A realistic listing body; `[<id>]` marks where autocannon puts a unique id. */
export function listingBody(reference: string, i: number): Record<string, unknown> {
  const brands = [
    ['Volkswagen', 'Golf', 'hatchback'],
    ['BMW', 'X1', 'suv'],
    ['Renault', 'Clio', 'hatchback'],
    ['Skoda', 'Octavia', 'estate'],
  ] as const;
  const [brand, model, bodyType] = brands[i % brands.length]!;
  return {
    externalReference: reference,
    dealerLocationCode: 'G001-L001',
    title: `${brand} ${model} ${2015 + (i % 10)}`,
    description: `Well maintained ${brand} ${model}, full service history.`,
    price: 9950 + (i % 50) * 250,
    brand,
    model,
    year: 2015 + (i % 10),
    mileage: 12_000 + i * 137,
    fuelType: i % 3 === 0 ? 'diesel' : 'petrol',
    transmission: i % 2 ? 'automatic' : 'manual',
    bodyType,
    color: 'grey',
    doors: 5,
    seats: 5,
    powerKw: 85,
    firstRegistration: `${2015 + (i % 10)}-04`,
    images: [1, 2, 3, 4, 5].map((n) => `https://images.example.com/bench/${reference}/${n}.jpg`),
    features: ['Navigation', 'Air conditioning', { category: 'safety', name: 'Parking camera' }],
  };
}

/**
 * listingBody for a PUT: the path names the listing, so the body carries no reference (one that
 * differs from the path's is refused). `tag` goes into the image URLs as a reference would.
 */
export function putBody(tag: string, i: number): Record<string, unknown> {
  const { externalReference: _path, ...body } = listingBody(tag, i);
  return body;
}

/** Store rows for the raw write limit: validated once, as the domain would, then fresh per batch. */
export function rowFactory(dealerProfileId: string) {
  const schema = listingBodySchema({ historyReportHosts: [] });
  const write = toListingWrite(schema.parse(listingBody('x', 1)));
  return (batch: number, size: number, run: string): ListingRow[] =>
    Array.from({ length: size }, (_, i) => {
      const reference = `BENCH-RAW-${run}-${batch}-${i}`;
      return {
        id: randomUUID(),
        reference,
        slug: `volkswagen-golf-2016-${randomUUID()}`,
        dealerProfileId,
        status: 'active',
        statusGiven: false,
        dealerGiven: true,
        values: write.values,
      };
    });
}
