/**
 * The Golf every example of the document shows: one used car at one location of one dealer
 * group, written (the body of a PUT or a bulk item: listingWriteExample) and read back (listing),
 * both made from the same facts so that the two cannot tell different stories. In the domain, not
 * the API's document: a webhook test ping sends it too (domain/webhooks/samples.ts).
 */

export const GROUP_ID = '0b7c1e9a-3f2d-4a5b-8c6d-7e8f9a0b1c2d';
export const LOCATION_ID = '5d2a8f31-9c4e-4b7a-a1d3-6e0f2b8c4a97';
export const LISTING_ID = '3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c';
export const REFERENCE = 'STOCK-2026-0042';

export const dealer = {
  id: LOCATION_ID,
  parentId: GROUP_ID,
  locationCode: 'VDB-GENT',
  companyName: 'Vandenberghe Auto NV',
  fullName: 'Vandenberghe Auto Gent',
  displayName: 'Vandenberghe Gent',
  email: 'gent@vandenberghe-auto.example.com',
  phone: '+32 9 123 45 67',
  address: 'Kortrijksesteenweg 1040',
  postalCode: '9051',
  city: 'Gent',
  province: 'Oost-Vlaanderen',
  logoUrl: 'https://cdn.vandenberghe-auto.example.com/logo.png',
  metadata: { dmsId: 'VDB-02' },
  parent: {
    id: GROUP_ID,
    locationCode: 'VDB',
    companyName: 'Vandenberghe Auto NV',
    fullName: 'Vandenberghe Auto Groep',
    displayName: 'Vandenberghe',
  },
};

/** The fields a write sends and a read shows as they are. */
const car = {
  externalReference: REFERENCE,
  title: 'Volkswagen Golf 1.5 TSI Life 2021',
  description: 'First owner, full Volkswagen service history, winter tyres included.',
  status: 'active',
  price: 21950,
  currency: 'EUR',
  brand: 'Volkswagen',
  model: 'Golf',
  variant: '1.5 TSI Life',
  year: 2021,
  mileage: 48200,
  fuelType: 'petrol',
  transmission: 'manual',
  bodyType: 'hatchback',
  color: 'Moonstone Grey',
  interiorColor: 'black',
  interiorMaterial: 'cloth',
  paintType: 'metallic',
  doors: 5,
  seats: 5,
  gears: 6,
  previousOwners: 1,
  powerKw: 96,
  co2Emission: 128,
  co2Type: 'wltp',
  emissionClass: 'euro6d',
};
const more = {
  driveType: 'fwd',
  weight: 1320,
  fuelConsumption: 5.6,
  serviceHistory: true,
  warranty: true,
  warrantyMonths: 12,
  vehicleType: 'margin',
  conditionTags: ['used', 'accident_free'],
  engine: '1.5 TSI 130 hp',
  vin: 'WVWZZZCDZMW012345',
  historyReportUrl: 'https://www.car-pass.be/en/check/12345678901',
};
const place = { postalCode: dealer.postalCode, city: dealer.city, province: dealer.province };
const coordinates = { latitude: 51.0259, longitude: 3.6885 };
const images = [
  'https://images.example.com/stock-2026-0042/1.jpg',
  'https://images.example.com/stock-2026-0042/2.jpg',
];

/** As a partner sends it: a location code for the dealer, plain image URLs, a feature by name. */
export const listingWriteExample = {
  ...car,
  dealerLocationCode: dealer.locationCode,
  firstRegistration: '2021-03',
  ...more,
  ...place,
  ...coordinates,
  images,
  features: [{ category: 'comfort', name: 'Adaptive cruise control' }, 'Heated seats'],
};

/** As the service shows it. */
export const listing = {
  id: LISTING_ID,
  slug: 'volkswagen-golf-1-5-tsi-life-2021-k3f9x2qa',
  listingUrl: 'https://www.marketplace.example.com/listings/volkswagen-golf-1-5-tsi-life-2021-k3f9x2qa',
  dealerProfileId: LOCATION_ID,
  externalProvider: 'Acme DMS',
  ...car,
  firstRegistration: '2021-03-01',
  ...more,
  location: { ...place, ...coordinates },
  // The first photo checked and fine; the second one's server answered an HTML page.
  images: images.map((url, position) => ({
    url,
    position,
    check:
      position === 0
        ? {
            state: 'ok',
            checkedAt: '2026-11-21T16:41:02.318Z',
            format: 'jpeg',
            width: 1600,
            height: 1200,
            bytes: 284113,
            contentType: 'image/jpeg',
            problem: null,
          }
        : {
            state: 'not_an_image',
            checkedAt: '2026-11-21T16:41:02.907Z',
            format: null,
            width: null,
            height: null,
            bytes: 5120,
            contentType: 'text/html; charset=utf-8',
            problem: {
              code: 'html_page',
              message: 'the server sent an HTML page (an error or login page, often with status 200)',
            },
          },
  })),
  mainImageUrl: images[0],
  features: [
    { category: 'comfort', name: 'Adaptive cruise control' },
    { category: 'other', name: 'Heated seats' },
  ],
  readiness: { live: true, reasons: [] },
  dealer,
  changedAt: '2026-11-21T16:41:02.907Z',
  createdAt: '2026-10-02T08:14:03.512Z',
  updatedAt: '2026-11-21T16:40:27.090Z',
};
