/**
 * Every enumeration a listing field accepts: canonical values and the aliases partners' feeds
 * commonly use. Matching is case-insensitive and ignores spaces, dashes and underscores, so
 * "Plug-in Hybrid", "plugin_hybrid" and "PLUGIN HYBRID" are one value. Served as GET /reference/enums.
 */
export const ENUMS = {
  status: { values: ['active', 'pending', 'sold', 'draft'], aliases: {} },
  fuelType: {
    values: [
      'petrol',
      'diesel',
      'electric',
      'hybrid',
      'plugin_hybrid',
      'lpg',
      'cng',
      'hydrogen',
      'ethanol',
      'other',
    ],
    aliases: {
      gasoline: 'petrol',
      benzine: 'petrol',
      benzin: 'petrol',
      essence: 'petrol',
      gas: 'petrol',
      ev: 'electric',
      bev: 'electric',
      elektrisch: 'electric',
      hev: 'hybrid',
      phev: 'plugin_hybrid',
      plug_in_hybrid: 'plugin_hybrid',
      autogas: 'lpg',
      cng_gas: 'cng',
      aardgas: 'cng',
      h2: 'hydrogen',
      e85: 'ethanol',
    },
  },
  transmission: {
    values: ['manual', 'automatic', 'semi_automatic'],
    aliases: {
      handgeschakeld: 'manual',
      stick: 'manual',
      auto: 'automatic',
      automaat: 'automatic',
      semi_auto: 'semi_automatic',
      dsg: 'semi_automatic',
    },
  },
  bodyType: {
    values: [
      'sedan',
      'hatchback',
      'station_wagon',
      'suv',
      'coupe',
      'convertible',
      'mpv',
      'pickup',
      'van',
      'other',
    ],
    aliases: {
      saloon: 'sedan',
      berline: 'sedan',
      estate: 'station_wagon',
      wagon: 'station_wagon',
      break: 'station_wagon',
      stationwagon: 'station_wagon',
      combi: 'station_wagon',
      crossover: 'suv',
      offroad: 'suv',
      cabrio: 'convertible',
      cabriolet: 'convertible',
      roadster: 'convertible',
      minivan: 'mpv',
      monovolume: 'mpv',
      pick_up: 'pickup',
      bestelwagen: 'van',
    },
  },
  driveType: {
    values: ['fwd', 'rwd', 'awd'],
    aliases: {
      front: 'fwd',
      front_wheel_drive: 'fwd',
      rear: 'rwd',
      rear_wheel_drive: 'rwd',
      '4wd': 'awd',
      '4x4': 'awd',
      all_wheel_drive: 'awd',
    },
  },
  vehicleType: {
    values: ['margin', 'vat_deductible'],
    aliases: {
      marge: 'margin',
      margin_scheme: 'margin',
      btw: 'vat_deductible',
      vat: 'vat_deductible',
      vat_qualifying: 'vat_deductible',
    },
  },
  emissionClass: {
    values: [
      'euro1',
      'euro2',
      'euro3',
      'euro4',
      'euro5',
      'euro6',
      'euro6c',
      'euro6d_temp',
      'euro6d',
      'euro7',
    ],
    aliases: { euro_6d_temp: 'euro6d_temp', euro6dtemp: 'euro6d_temp' },
  },
  co2Type: { values: ['wltp', 'nedc'], aliases: {} },
  paintType: {
    values: ['solid', 'metallic', 'pearl', 'matte'],
    aliases: {
      uni: 'solid',
      plain: 'solid',
      metallic_paint: 'metallic',
      metaal: 'metallic',
      pearlescent: 'pearl',
      parelmoer: 'pearl',
      mat: 'matte',
      matt: 'matte',
    },
  },
  interiorMaterial: {
    values: ['cloth', 'leather', 'partial_leather', 'alcantara', 'velour', 'other'],
    aliases: {
      fabric: 'cloth',
      stof: 'cloth',
      textile: 'cloth',
      leder: 'leather',
      cuir: 'leather',
      half_leather: 'partial_leather',
      semi_leather: 'partial_leather',
      velours: 'velour',
    },
  },
  conditionTags: {
    values: ['new', 'used', 'demo', 'pre_registered', 'accident_free', 'damaged', 'non_running', 'oldtimer'],
    aliases: {
      nieuw: 'new',
      occasion: 'used',
      second_hand: 'used',
      demonstration: 'demo',
      dagtoelating: 'pre_registered',
      no_accidents: 'accident_free',
      schadevrij: 'accident_free',
      defect: 'non_running',
      classic: 'oldtimer',
    },
  },
} as const satisfies Record<string, { values: readonly string[]; aliases: Record<string, string> }>;

export type EnumName = keyof typeof ENUMS;

/** "Plug-in Hybrid" → "plug_in_hybrid": the form aliases and values are compared in. */
export function enumKey(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/** The canonical value for `raw`, or undefined when it is neither a value nor an alias. */
export function matchEnum(name: EnumName, raw: string): string | undefined {
  const key = enumKey(raw);
  const spec = ENUMS[name];
  if ((spec.values as readonly string[]).includes(key)) return key;
  const compact = key.replace(/_/g, '');
  const byCompact = (spec.values as readonly string[]).find((v) => v.replace(/_/g, '') === compact);
  if (byCompact) return byCompact;
  return (spec.aliases as Record<string, string>)[key];
}
