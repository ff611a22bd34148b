/**
 * Every enumeration a listing field accepts: canonical values and the aliases partners' feeds
 * commonly use. Matching is case-insensitive and ignores accents; a value matches with its
 * underscores left out or written as spaces, hyphens or underscores ("Plug-in Hybrid",
 * "plugin_hybrid", "PLUGIN HYBRID", "Euro 6e-bis"), an alias with one underscore or a run of
 * spaces and hyphens between its words. Served as GET /reference/enums.
 *
 * The aliases are the words Belgian, Dutch and French dealer systems send (reviewed for issue 41
 * enumeration by enumeration). A bi-fuel car is filed under the fuel that is not petrol: petrol
 * and LPG (`Benzine/LPG`, `LPG/benzine`, `Essence/GPL`, `Benzine + LPG`) is lpg, petrol and natural gas
 * (`Benzine/CNG`, `Benzine/Aardgas`) is cng, as portals file them; petrol or diesel with electric
 * (`Benzine/Elektrisch`, the Dutch portals' label of a hybrid) is hybrid.
 */

/**
 * The words of two fuels together ("benzine/lpg", "lpg_benzine", "Benzine LPG"), both orders, with a
 * slash or as one alias of two words, each naming `value`.
 */
function pairs(first: readonly string[], second: readonly string[], value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of first) {
    for (const b of second) {
      for (const [x, y] of [
        [a, b],
        [b, a],
      ]) {
        out[`${x}/${y}`] = value;
        out[`${x}_${y}`] = value;
      }
    }
  }
  return out;
}

const PETROL_WORDS = ['petrol', 'benzine', 'essence'] as const;
/** Petrol as bi-fuel labels write it (`Super/LPG`, `Ess/GPL`, `Gasoline/CNG`). */
const BI_FUEL_PETROL = [...PETROL_WORDS, 'benzin', 'gasoline', 'super', 'ess'] as const;
const BI_FUEL = {
  ...pairs(BI_FUEL_PETROL, ['lpg', 'gpl', 'autogas'], 'lpg'),
  ...pairs(BI_FUEL_PETROL, ['cng', 'gnc', 'aardgas', 'erdgas', 'gaz_naturel'], 'cng'),
  ...pairs([...PETROL_WORDS, 'diesel'], ['electric', 'elektrisch', 'electrique'], 'hybrid'),
};
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
      super: 'petrol',
      loodvrij: 'petrol',
      benzin: 'petrol',
      essence: 'petrol',
      sans_plomb: 'petrol',
      gazole: 'diesel',
      gasoil: 'diesel',
      ev: 'electric',
      elektriciteit: 'electric',
      electricite: 'electric',
      bev: 'electric',
      elektrisch: 'electric',
      electrique: 'electric',
      elektrisch_bev: 'electric',
      hev: 'hybrid',
      hybride: 'hybrid',
      hybride_benzine: 'hybrid',
      hybride_essence: 'hybrid',
      hybride_diesel: 'hybrid',
      mhev: 'hybrid',
      mild_hybrid: 'hybrid',
      mild_hybride: 'hybrid',
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
      fcev: 'hydrogen',
      h2: 'hydrogen',
      waterstof: 'hydrogen',
      hydrogene: 'hydrogen',
      e85: 'ethanol',
      bio_ethanol: 'ethanol',
      bioethanol: 'ethanol',
      overige: 'other',
      andere: 'other',
      autre: 'other',
      ...BI_FUEL,
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
      automatische: 'automatic',
      automatic_transmission: 'automatic',
      boite_automatique: 'automatic',
      manual_transmission: 'manual',
      boite_manuelle: 'manual',
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
      robotisee: 'semi_automatic',
      boite_robotisee: 'semi_automatic',
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
      hatch: 'hatchback',
      citadine: 'hatchback',
      limousine: 'sedan',
      coupe_cabriolet: 'convertible',
      fourgon: 'van',
      fourgonnette: 'van',
      bestelauto: 'van',
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
      // All-wheel drive by its makers' names, as transmissions are named by theirs above.
      quattro: 'awd',
      '4motion': 'awd',
      xdrive: 'awd',
      '4matic': 'awd',
      allrad: 'awd',
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
      'euro6e',
      'euro6e_bis',
      'euro6e_bis_fcm',
      'euro7',
    ],
    // A value matches with or without its underscores ("Euro 6e-bis", "EURO6E-BIS-FCM"); these are
    // the longer names of the papers: Euro 6b is the first Euro 6, 6d-TEMP-EVAP(-ISC) is 6d-TEMP,
    // 6d-ISC(-FCM) is 6d.
    aliases: {
      euro_6d_temp: 'euro6d_temp',
      euro6dtemp: 'euro6d_temp',
      euro_6b: 'euro6',
      euro6b: 'euro6',
      euro_6d_temp_evap: 'euro6d_temp',
      euro6d_temp_evap: 'euro6d_temp',
      euro_6d_temp_evap_isc: 'euro6d_temp',
      euro6d_temp_evap_isc: 'euro6d_temp',
      euro_6d_isc: 'euro6d',
      euro6d_isc: 'euro6d',
      euro_6d_isc_fcm: 'euro6d',
      euro6d_isc_fcm: 'euro6d',
    },
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
      ...pairs(['stof', 'tissu', 'cloth', 'fabric'], ['leder', 'leer', 'cuir', 'leather'], 'partial_leather'),
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
 * are compared in. Accents are dropped, since feeds write the same word with and without them. Two
 * words joined by `/`, `+`, `&` or "en"/"et"/"met", spaced or not, are joined by `/`
 * ("Benzine + LPG", "Benzine / LPG", "Essence et GPL" → "benzine/lpg"), the form of the bi-fuel
 * aliases, so a feed's spacing does not make a second key.
 */
export function enumKey(raw: string): string {
  return (
    raw
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .trim()
      .toLowerCase()
      // Each run of white space as one space first (a single space is left as it is): the
      // separators' patterns then cross a run once. Run over the raw text they backtracked
      // through it at every position, a second of CPU for 20,000 spaces (found 2026-11-30).
      .replace(/\s{2,}|[^\S ]/g, ' ')
      .replace(/ ?[/+&] ?| (?:en|et|met) /g, '/')
      .replace(/[ -]+/g, '_')
  );
}

/**
 * The longest text, trimmed, that an enumeration reads: its longest alias is 25 characters, the
 * rest is room for a feed's padding between words. Past it nothing is normalized (a status of 5
 * MiB of short words took over a second): such a text is no value, alias or refused word.
 */
const ENUM_TEXT_MAX = 1000;
const beyondReading = (raw: string) => raw.length > ENUM_TEXT_MAX && raw.trim().length > ENUM_TEXT_MAX;

/**
 * Why a word is refused rather than mapped, when it is one of the ambiguous words a feed may send
 * (`gas` is petrol in the US and LPG in Belgium): guessing would store the wrong fuel quietly.
 */
export function refusalOf(name: EnumName, raw: string): string | undefined {
  const refused = (ENUMS[name] as { refused?: Record<string, string> }).refused;
  if (!refused || beyondReading(raw)) return undefined;
  const key = enumKey(raw);
  // Own words only: "constructor" is no refusal (nor, below, an alias) of any enumeration.
  return Object.hasOwn(refused, key) ? refused[key] : undefined;
}

/**
 * Whether `raw` is exactly one of the values: most feeds send the value itself, which is its own
 * key (a unit test holds every value to that), so it needs no normalizing (bench/results/
 * 2026-11-30-bulk-input.txt: enumKey was 3 % of a listing's validation).
 */
export function isValue(name: EnumName, raw: string): boolean {
  return (ENUMS[name].values as readonly string[]).includes(raw);
}

/** The canonical value for `raw`, or undefined when it is neither a value nor an alias. */
export function matchEnum(name: EnumName, raw: string): string | undefined {
  if (isValue(name, raw)) return raw;
  if (beyondReading(raw)) return undefined;
  const spec = ENUMS[name];
  const key = enumKey(raw);
  if ((spec.values as readonly string[]).includes(key)) return key;
  const compact = key.replace(/_/g, '');
  const byCompact = (spec.values as readonly string[]).find((v) => v.replace(/_/g, '') === compact);
  if (byCompact) return byCompact;
  const aliases = spec.aliases as Record<string, string>;
  return Object.hasOwn(aliases, key) ? aliases[key] : undefined;
}
