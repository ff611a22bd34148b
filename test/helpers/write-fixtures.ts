import assert from 'node:assert/strict';
import { ALL_SCOPES, createPartner, type Reply, type TestApp, unique } from './app.js';
import { assertError } from './read-fixtures.js';

/** Shared helpers for the write-side tests (PUT, bulk upsert, status, DELETE, properties). */

export const WRITE_SCOPES = ['read:listings', 'write:listings'];
// One definition of the error-envelope check, shared with the read tests.
export { ALL_SCOPES, assertError };

/** The enumerations exactly as docs/contract.md#enumerations lists them: the contract, not the code. */
export const SPEC_ENUMS: Record<string, string[]> = {
  status: ['active', 'pending', 'sold', 'draft'],
  fuelType: [
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
  transmission: ['manual', 'automatic', 'semi_automatic'],
  bodyType: [
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
  driveType: ['fwd', 'rwd', 'awd'],
  vehicleType: ['margin', 'vat_deductible'],
  emissionClass: [
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
  co2Type: ['wltp', 'nedc'],
  paintType: ['solid', 'metallic', 'pearl', 'matte'],
  interiorMaterial: ['cloth', 'leather', 'partial_leather', 'alcantara', 'velour', 'other'],
  conditionTags: [
    'new',
    'used',
    'demo',
    'pre_registered',
    'accident_free',
    'damaged',
    'non_running',
    'oldtimer',
  ],
};

/** A reference unique across test files sharing one database. */
export const ref = (prefix = 'ref') => unique(prefix);

/** A partner with read and write scope on these roots (or global access). */
export async function writer(
  app: TestApp,
  roots: string[] | 'global',
): Promise<{ id: string; secret: string }> {
  return createPartner(
    app,
    roots === 'global' ? { global: true, scopes: WRITE_SCOPES } : { roots, scopes: WRITE_SCOPES },
  );
}

/** Asserts 422 VALIDATION_FAILED and returns the sorted, distinct top-level paths of its issues. */
export function validationPaths(reply: Reply): string[] {
  const error = assertError(reply, 422, 'VALIDATION_FAILED');
  assert.ok(Array.isArray(error.issues) && error.issues.length > 0, reply.text);
  for (const issue of error.issues) {
    assert.equal(typeof issue.path, 'string');
    assert.equal(typeof issue.message, 'string');
    assert.equal(typeof issue.code, 'string');
  }
  return [...new Set<string>(error.issues.map((i: { path: string }) => i.path))].sort();
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
