/**
 * Column names Belgian and Dutch dealer systems export, in Dutch, French and plain English, for the
 * fields of a listing. Written as people write them; they are compared folded (see `foldName`), so
 * `Kilométrage`, `KILOMETRAGE` and `kilometrage` are one name. A system's other names go through
 * `--columns FILE`. Only names that mean one field are here: `type` or `vermogen (pk)` are not.
 */
export const COLUMN_NAMES: Record<string, string[]> = {
  externalReference: ['reference', 'ref', 'referentie', 'référence', 'stocknummer', 'numéro de stock'],
  dealerLocationCode: ['location code', 'locatiecode', 'vestigingscode', 'code vestiging', 'dealer code'],
  title: ['titel', 'titre'],
  description: ['omschrijving', 'beschrijving', 'commentaar', 'commentaire'],
  price: ['prijs', 'prix', 'verkoopprijs', 'prix de vente'],
  currency: ['munt', 'valuta', 'devise'],
  brand: ['merk', 'marque', 'make'],
  model: ['modèle'],
  variant: ['uitvoering', 'versie', 'version', 'finition'],
  year: ['bouwjaar', 'jaar', 'année', 'annee de construction', 'année de construction'],
  mileage: ['kilometerstand', 'kilometers', 'km', 'kilométrage', 'odometer'],
  fuelType: ['fuel', 'brandstof', 'carburant', 'énergie'],
  transmission: ['gearbox', 'transmissie', 'versnellingsbak', 'boîte de vitesses', 'boîte', 'schakeling'],
  bodyType: ['body', 'carrosserie', 'koetswerk', 'type de carrosserie', 'carrosserievorm'],
  color: ['colour', 'kleur', 'couleur', 'exterior color', 'buitenkleur', 'couleur extérieure'],
  interiorColor: ['interieurkleur', 'kleur interieur', 'couleur intérieure', 'couleur intérieur'],
  interiorMaterial: ['bekleding', 'sellerie', 'upholstery'],
  doors: ['deuren', 'aantal deuren', 'portes', 'nombre de portes'],
  seats: ['zitplaatsen', 'aantal zitplaatsen', 'places', 'nombre de places'],
  gears: ['versnellingen', 'aantal versnellingen', 'rapports', 'nombre de rapports'],
  previousOwners: ['vorige eigenaars', 'aantal eigenaars', 'propriétaires', 'propriétaires précédents'],
  powerKw: ['power', 'kw', 'vermogen', 'vermogen kw', 'puissance', 'puissance kw'],
  co2Emission: ['co2', 'co2 uitstoot', 'uitstoot co2', 'émissions co2', 'co2 emissions'],
  emissionClass: ['euronorm', 'emissienorm', 'norme euro', 'norme antipollution'],
  firstRegistration: [
    'eerste inschrijving',
    'datum eerste inschrijving',
    'première immatriculation',
    'date de première immatriculation',
    'first registration date',
  ],
  driveType: ['aandrijving', 'traction', 'drive'],
  weight: ['gewicht', 'poids'],
  fuelConsumption: ['verbruik', 'consommation'],
  serviceHistory: ['onderhoudsboekje', "carnet d'entretien"],
  warranty: ['garantie'],
  warrantyMonths: ['garantie maanden', 'maanden garantie', 'mois de garantie', 'garantie mois'],
  engine: ['motor', 'moteur'],
  vin: ['chassisnummer', 'chassisnr', 'numéro de châssis', 'vin number'],
  postalCode: ['postcode', 'code postal', 'zip', 'zip code'],
  city: ['stad', 'gemeente', 'plaats', 'ville', 'localité'],
  province: ['provincie'],
  images: ["foto's", 'fotos', 'photos', 'afbeeldingen', 'pictures', 'image urls'],
  features: ['opties', 'options', 'uitrusting', 'équipements', 'équipement'],
};

/**
 * A column name as compared: accents off (é → e, ₂ → 2), lowercase, letters and digits only, and
 * a unit in brackets dropped when it is the field's own (`Prijs (€)`, `Vermogen (kW)`); other
 * brackets stay, so `Vermogen (pk)` is no kW column.
 */
export function foldName(name: string): string {
  const unit = /\s*[([]\s*(€|eur|km|kw|g\/km|kg|l\/100\s?km)\s*[)\]]\s*$/i;
  return name
    .replace(unit, '')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}
