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
      sans_plomb: 'petrol',
      ev: 'electric',
      bev: 'electric',
      elektrisch: 'electric',
      electrique: 'electric',
      elektrisch_bev: 'electric',
      hev: 'hybrid',
      hybride: 'hybrid',
      hybride_benzine: 'hybrid',
      hybride_essence: 'hybrid',
      hybride_diesel: 'hybrid',
      phev: 'plugin_hybrid',
      plug_in_hybrid: 'plugin_hybrid',
      plug_in_hybride: 'plugin_hybrid',
      plugin_hybride: 'plugin_hybrid',
      hybride_rechargeable: 'plugin_hybrid',
      hybride_plug_in: 'plugin_hybrid',
      autogas: 'lpg',
      gpl: 'lpg',
      cng_gas: 'cng',
      aardgas: 'cng',
      gnc: 'cng',
      gaz_naturel: 'cng',
      h2: 'hydrogen',
      waterstof: 'hydrogen',
      hydrogene: 'hydrogen',
      e85: 'ethanol',
      bio_ethanol: 'ethanol',
      bioethanol: 'ethanol',
      overige: 'other',
      andere: 'other',
      autre: 'other',
    },
    refused: {
      gas: 'is ambiguous: it means petrol in the US but LPG in Belgium and the Netherlands; send petrol or lpg',
      gaz: 'is ambiguous: it may mean LPG (gpl) or natural gas (gnc); send lpg or cng',
    },
  },
  transmission: {
    values: ['manual', 'automatic', 'semi_automatic'],
    aliases: {
      handgeschakeld: 'manual',
      manueel: 'manual',
      manuel: 'manual',
      manuelle: 'manual',
      handbediend: 'manual',
      stick: 'manual',
      auto: 'automatic',
      automaat: 'automatic',
      automatisch: 'automatic',
      automatique: 'automatic',
      // Automatic gearboxes by their makers' names: dual-clutch (DSG, DCT, EDC, S tronic, PDK) and
      // continuously variable (CVT) ones shift on their own, and buyers and portals file them as
      // automatic. Semi-automatic is a clutchless manual shifted by the driver (automated manual).
      cvt: 'automatic',
      e_cvt: 'automatic',
      dsg: 'automatic',
      dct: 'automatic',
      edc: 'automatic',
      s_tronic: 'automatic',
      pdk: 'automatic',
      tiptronic: 'automatic',
      steptronic: 'automatic',
      semi_auto: 'semi_automatic',
      semi_automaat: 'semi_automatic',
      semi_automatisch: 'semi_automatic',
      semi_automatique: 'semi_automatic',
      halfautomaat: 'semi_automatic',
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
      sedan_berline: 'sedan',
      hatchback_berline: 'hatchback',
      compacte: 'hatchback',
      stationwagen: 'station_wagon',
      station: 'station_wagon',
      terreinwagen: 'suv',
      tout_terrain: 'suv',
      monospace: 'mpv',
      ludospace: 'mpv',
      camionnette: 'van',
      utilitaire: 'van',
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
      voorwielaandrijving: 'fwd',
      traction_avant: 'fwd',
      achterwielaandrijving: 'rwd',
      propulsion: 'rwd',
      vierwielaandrijving: 'awd',
      '4_roues_motrices': 'awd',
      integrale: 'awd',
      transmission_integrale: 'awd',
    },
  },
  vehicleType: {
    values: ['margin', 'vat_deductible'],
    aliases: {
      marge: 'margin',
      margeregeling: 'margin',
      regime_de_la_marge: 'margin',
      margin_scheme: 'margin',
      btw_aftrekbaar: 'vat_deductible',
      tva_deductible: 'vat_deductible',
      tva_recuperable: 'vat_deductible',
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
      metaalkleur: 'metallic',
      metallise: 'metallic',
      metallisee: 'metallic',
      effen: 'solid',
      pearlescent: 'pearl',
      parelmoer: 'pearl',
      nacre: 'pearl',
      nacree: 'pearl',
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
      leer: 'leather',
      cuir: 'leather',
      tissu: 'cloth',
      half_leather: 'partial_leather',
      semi_leather: 'partial_leather',
      half_leder: 'partial_leather',
      halfleder: 'partial_leather',
      deels_leder: 'partial_leather',
      cuir_partiel: 'partial_leather',
      mi_cuir: 'partial_leather',
      velours: 'velour',
    },
  },
  conditionTags: {
    values: ['new', 'used', 'demo', 'pre_registered', 'accident_free', 'damaged', 'non_running', 'oldtimer'],
    aliases: {
      nieuw: 'new',
      neuf: 'new',
      neuve: 'new',
      gebruikt: 'used',
      tweedehands: 'used',
      occasion: 'used',
      second_hand: 'used',
      demonstration: 'demo',
      demowagen: 'demo',
      vehicule_de_demonstration: 'demo',
      dagtoelating: 'pre_registered',
      no_accidents: 'accident_free',
      schadevrij: 'accident_free',
      ongevalvrij: 'accident_free',
      sans_accident: 'accident_free',
      beschadigd: 'damaged',
      endommage: 'damaged',
      accidente: 'damaged',
      defect: 'non_running',
      classic: 'oldtimer',
    },
  },
} as const satisfies Record<
  string,
  { values: readonly string[]; aliases: Record<string, string>; refused?: Record<string, string> }
>;

export type EnumName = keyof typeof ENUMS;

/**
 * "Plug-in Hybride" → "plug_in_hybride", "Électrique" → "electrique": the form aliases and values
 * are compared in. Accents are dropped, since feeds write the same word with and without them.
 */
export function enumKey(raw: string): string {
  return raw
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/**
 * Why a word is refused rather than mapped, when it is one of the ambiguous words a feed may send
 * (`gas` is petrol in the US and LPG in Belgium): guessing would store the wrong fuel quietly.
 */
export function refusalOf(name: EnumName, raw: string): string | undefined {
  const refused = (ENUMS[name] as { refused?: Record<string, string> }).refused;
  return refused?.[enumKey(raw)];
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
