import type { Partner } from '../domain/access.js';
import type { PartnerAuthentication } from '../domain/authentication.js';
import type { DealerAdmin } from '../domain/dealers.js';
import type { ListingWrites } from '../domain/listings/writes/index.js';
import type { PartnerAdmin } from '../domain/partners.js';
import { localContext } from '../store/audit.js';
import { COLORS, DEMO_DEALERS, FEATURES, MODELS, random } from './data.js';
import { demoListingImages } from './listing-images.js';

const FUELS = ['petrol', 'diesel', 'hybrid', 'electric', 'plugin_hybrid'];
const READ_ONLY = 'Demo reader (read-only)';
const READ_WRITE = 'Demo dealer feed (read-write)';

/** The read-write partner can try everything, webhooks included (docs/contract.md#the-demo). */
const READ_WRITE_SCOPES = ['read:listings', 'read:locations', 'write:listings', 'manage:webhooks'] as const;

/** How many test listings the read-write partner starts with, so its first test reads show some. */
const TEST_LISTINGS = 6;

/**
 * The demo's secrets, as an earlier run printed them (run.ts keeps them in DATA_DIR): the two
 * partners' live secrets, and the read-write partner's test secret (docs/test-mode.md), where the
 * partner guide starts.
 */
export interface DemoSecrets {
  readOnly: string;
  readWrite: string;
  test: string;
}

/**
 * Fills an empty database with demo dealers, two partners and a few hundred listings, through the
 * same domain functions the API uses, and a test secret for the read-write partner with a few test
 * listings. Run again, it keeps the secrets of the earlier run when they still belong to the
 * demo's partners (`kept`), so what a partner exported keeps working; otherwise it issues fresh
 * ones, and `secrets` says which happened.
 */
export async function seedDemo(
  useCases: {
    dealers: DealerAdmin;
    partners: PartnerAdmin;
    writes: ListingWrites;
    authentication: Pick<PartnerAuthentication, 'identify'>;
  },
  options: {
    listingCount?: number;
    earlier?: DemoSecrets | undefined;
    /** Where the demo serves its sample images (image-server.ts): its listings' image URLs. */
    imageOrigin: string;
  },
) {
  const { dealers: dealerAdmin, partners, writes } = useCases;
  const listingCount = options.listingCount ?? 300;
  const ctx = localContext('demo');
  const existing = await partners.list();
  const reader = existing.find((p) => p.name === READ_ONLY);
  const writer = existing.find((p) => p.name === READ_WRITE);
  if (reader && writer) {
    // Demo data from before the read-write partner could manage webhooks gets the scope now.
    if (!READ_WRITE_SCOPES.every((scope) => writer.scopes.includes(scope))) {
      await partners.update(writer.id, { scopes: [...READ_WRITE_SCOPES] }, ctx);
    }
    const stillValid = async (partnerId: string, secret: string | undefined, test = false) =>
      secret !== undefined &&
      (await useCases.authentication.identify(secret).then(
        (found) => found.record.id === partnerId && found.test === test,
        () => false,
      ));
    const earlier = options.earlier;
    if (
      earlier &&
      (await stillValid(reader.id, earlier.readOnly)) &&
      (await stillValid(writer.id, earlier.readWrite)) &&
      (await stillValid(writer.id, earlier.test, true))
    ) {
      return {
        readOnlySecret: earlier.readOnly,
        readWriteSecret: earlier.readWrite,
        testSecret: earlier.test,
        seeded: false,
        secrets: 'kept' as const,
      };
    }
    const [r, w, t] = [
      await partners.rotateSecret(reader.id, 0, ctx),
      await partners.rotateSecret(writer.id, 0, ctx),
      await partners.issueTestSecret(writer.id, ctx),
    ];
    return {
      readOnlySecret: r!.secret,
      readWriteSecret: w!.secret,
      testSecret: t!.secret,
      seeded: false,
      secrets: 'new' as const,
    };
  }

  const { dealers } = await dealerAdmin.importTree(DEMO_DEALERS, ctx);
  const byCode = new Map(dealers.map((d) => [d.locationCode, d.id]));
  const roots = ['VDB', 'VDIJK', 'DUPONT'].map((c) => byCode.get(c)!);
  const readOnly = await partners.create(
    {
      name: READ_ONLY,
      access: { scope: 'restricted', rootProfileIds: roots },
    },
    ctx,
  );
  const readWrite = await partners.create(
    {
      name: READ_WRITE,
      scopes: [...READ_WRITE_SCOPES],
      access: { scope: 'restricted', rootProfileIds: roots },
    },
    ctx,
  );

  const rnd = random(20261122);
  const locations = dealers.filter((d) => d.parentId !== null);
  const items = Array.from({ length: listingCount }, (_, i) => {
    const [brand, model, bodyType, basePrice] = rnd.pick(MODELS);
    const year = rnd.int(2014, 2025);
    const age = 2026 - year;
    const fuelType = brand === 'Tesla' ? 'electric' : rnd.pick(FUELS);
    const location = rnd.pick(locations);
    const status = rnd.next() < 0.8 ? 'active' : rnd.pick(['pending', 'sold', 'draft']);
    const reference = `DEMO-${String(i + 1).padStart(5, '0')}`;
    return {
      externalReference: reference,
      dealerProfileId: location.id,
      status,
      title: `${brand} ${model} ${year}`,
      description: `Well maintained ${brand} ${model}, ${age ? `${age} years old` : 'nearly new'}, full dealer service history.`,
      price: Math.round((basePrice * 0.85 ** age * (0.9 + rnd.next() * 0.2)) / 50) * 50,
      brand,
      model,
      year,
      mileage: Math.max(5, age * rnd.int(9_000, 22_000)),
      fuelType,
      transmission: rnd.next() < 0.55 ? 'automatic' : 'manual',
      bodyType,
      color: rnd.pick(COLORS),
      doors: bodyType === 'coupe' ? 2 : 5,
      seats: 5,
      powerKw: rnd.int(55, 190),
      firstRegistration: `${year}-${String(rnd.int(1, 12)).padStart(2, '0')}`,
      previousOwners: Math.min(age, rnd.int(0, 3)),
      warranty: rnd.next() < 0.6,
      warrantyMonths: 12,
      vehicleType: rnd.next() < 0.7 ? 'margin' : 'vat_deductible',
      conditionTags: ['used', ...(rnd.next() < 0.7 ? ['accident_free'] : [])],
      ...(location.postalCode?.length === 4 && /^\d+$/.test(location.postalCode) && rnd.next() < 0.5
        ? { historyReportUrl: String(rnd.int(10_000_000_000, 99_999_999_999)) }
        : {}),
      postalCode: location.postalCode,
      city: location.city,
      province: location.province,
      images: demoListingImages(i, rnd.int(2, 6), options.imageOrigin),
      features: FEATURES.filter(() => rnd.next() < 0.4).map(([category, name]) => ({ category, name })),
    };
  });
  const partner: Partner = {
    ...readWrite,
    test: false,
    access: { scope: 'restricted', rootProfileIds: roots, profileIds: [...byCode.values()] },
    rateLimitPerMinute: null,
  };
  const write = async (as: Partner, listings: typeof items) => {
    for (let i = 0; i < listings.length; i += 100) {
      const batch = listings
        .slice(i, i + 100)
        .map((body, n) => ({ index: n, reference: body.externalReference, body }));
      const { errors } = await writes.upsert(as, batch, { dryRun: false });
      if (errors.length) throw new Error(`demo data failed validation: ${JSON.stringify(errors[0])}`);
    }
  };
  await write(partner, items);
  // The read-write partner's test data: a few of the same cars under references of their own
  // (TEST-…), seen by its test secret only.
  const test = await partners.issueTestSecret(readWrite.id, ctx);
  await write(
    { ...partner, test: true },
    items.slice(0, TEST_LISTINGS).map((item, i) => ({
      ...item,
      externalReference: `TEST-${String(i + 1).padStart(5, '0')}`,
      status: 'active',
    })),
  );
  return {
    readOnlySecret: readOnly.secret,
    readWriteSecret: readWrite.secret,
    testSecret: test!.secret,
    seeded: true,
    secrets: 'new' as const,
  };
}
