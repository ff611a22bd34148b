import type { DealerTreeNode } from '../domain/dealers.js';

/** A small deterministic PRNG (mulberry32): the same demo data on every machine. */
export function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

const place = (postalCode: string, city: string, province: string) => ({ postalCode, city, province });

/** Three dealer groups in Belgium and the Netherlands, two or three levels deep. */
export const DEMO_DEALERS: DealerTreeNode[] = [
  {
    locationCode: 'VDB',
    companyName: 'Autohuis Vandenberghe NV',
    displayName: 'Autohuis Vandenberghe',
    email: 'info@vandenberghe.example',
    phone: '+32 9 123 45 67',
    ...place('9000', 'Gent', 'Oost-Vlaanderen'),
    children: [
      {
        locationCode: 'VDB-GENT',
        displayName: 'Vandenberghe Gent',
        address: 'Brusselsesteenweg 120',
        ...place('9050', 'Gent', 'Oost-Vlaanderen'),
      },
      {
        locationCode: 'VDB-ANTW',
        displayName: 'Vandenberghe Antwerpen',
        address: 'Noorderlaan 45',
        ...place('2030', 'Antwerpen', 'Antwerpen'),
        children: [
          {
            locationCode: 'VDB-ANTW-EV',
            displayName: 'Vandenberghe Antwerpen EV Center',
            ...place('2030', 'Antwerpen', 'Antwerpen'),
          },
        ],
      },
      {
        locationCode: 'VDB-BRUG',
        displayName: 'Vandenberghe Brugge',
        ...place('8200', 'Brugge', 'West-Vlaanderen'),
      },
    ],
  },
  {
    locationCode: 'VDIJK',
    companyName: 'Van Dijk Auto Groep B.V.',
    displayName: 'Van Dijk Auto Groep',
    email: 'verkoop@vandijk.example',
    ...place('3511', 'Utrecht', 'Utrecht'),
    children: [
      { locationCode: 'VDIJK-UTR', displayName: 'Van Dijk Utrecht', ...place('3526', 'Utrecht', 'Utrecht') },
      {
        locationCode: 'VDIJK-RDAM',
        displayName: 'Van Dijk Rotterdam',
        ...place('3011', 'Rotterdam', 'Zuid-Holland'),
        children: [
          {
            locationCode: 'VDIJK-RDAM-Z',
            displayName: 'Van Dijk Rotterdam-Zuid',
            ...place('3083', 'Rotterdam', 'Zuid-Holland'),
          },
        ],
      },
      {
        locationCode: 'VDIJK-EHV',
        displayName: 'Van Dijk Eindhoven',
        ...place('5611', 'Eindhoven', 'Noord-Brabant'),
      },
    ],
  },
  {
    locationCode: 'DUPONT',
    companyName: 'Garage Dupont SRL',
    displayName: 'Garage Dupont',
    ...place('1000', 'Brussel', 'Brussel'),
    children: [
      {
        locationCode: 'DUPONT-BXL',
        displayName: 'Dupont Bruxelles',
        ...place('1070', 'Anderlecht', 'Brussel'),
      },
      {
        locationCode: 'DUPONT-LEU',
        displayName: 'Dupont Leuven',
        ...place('3000', 'Leuven', 'Vlaams-Brabant'),
      },
    ],
  },
];

export const MODELS: readonly [string, string, string, number][] = [
  ['Volkswagen', 'Golf', 'hatchback', 24_000],
  ['Volkswagen', 'Tiguan', 'suv', 34_000],
  ['Volkswagen', 'Passat Variant', 'station_wagon', 29_000],
  ['BMW', '320i', 'sedan', 38_000],
  ['BMW', 'X3', 'suv', 48_000],
  ['Audi', 'A4 Avant', 'station_wagon', 36_000],
  ['Audi', 'Q5', 'suv', 49_000],
  ['Mercedes-Benz', 'C 200', 'sedan', 42_000],
  ['Mercedes-Benz', 'GLA 200', 'suv', 39_000],
  ['Renault', 'Clio', 'hatchback', 16_000],
  ['Peugeot', '308', 'hatchback', 22_000],
  ['Peugeot', '3008', 'suv', 30_000],
  ['Toyota', 'Yaris', 'hatchback', 18_000],
  ['Toyota', 'RAV4', 'suv', 38_000],
  ['Skoda', 'Octavia Combi', 'station_wagon', 26_000],
  ['Kia', 'Niro', 'suv', 31_000],
  ['Tesla', 'Model 3', 'sedan', 42_000],
  ['Volvo', 'XC60', 'suv', 52_000],
  ['Ford', 'Focus', 'hatchback', 21_000],
  ['Opel', 'Corsa', 'hatchback', 17_000],
];

export const COLORS = ['black', 'white', 'grey', 'silver', 'blue', 'red', 'green'];
export const FEATURES = [
  ['comfort', 'Air conditioning'],
  ['comfort', 'Heated seats'],
  ['comfort', 'Cruise control'],
  ['multimedia', 'Navigation'],
  ['multimedia', 'Apple CarPlay'],
  ['safety', 'Parking sensors'],
  ['safety', 'Rear camera'],
  ['safety', 'Lane assist'],
  ['exterior', 'Alloy wheels'],
  ['exterior', 'Tow bar'],
] as const;
