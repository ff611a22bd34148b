/**
 * `@forecourt/client`: a typed client for the Forecourt partner API.
 *
 *   import { createClient } from '@forecourt/client';
 *   const forecourt = createClient({ baseUrl: 'https://localhost:8443', secret, ca });
 *   const report = await forecourt.listings.upsertMany(listings, { onBatch });
 *
 * docs/client.md shows every method. Types come from docs/openapi.json (src/openapi.ts, generated).
 */
export { createClient } from './client.js';
export { ForecourtError } from './errors.js';
export type { components, operations, paths } from './openapi.js';
export type * from './types.js';
export { type VerifyOptions, verifyWebhook, WebhookVerificationError } from './webhook-verify.js';
