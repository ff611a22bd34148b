import { z } from 'zod';
import { ALL_SCOPES } from '../access.js';
import { adminName } from './admin-fields.js';

/*
 * A partner as the admin API takes and shows it: the one definition the domain's use cases
 * (domain/partners.ts), the routes, the OpenAPI document and the CLI share. The store keeps only
 * its row (store/partners.ts), which partnerView turns into this.
 */

const scopeList = z.array(z.enum(ALL_SCOPES, { error: `must be one of ${ALL_SCOPES.join(', ')}` })).max(10);

/** What a partner may see, as an operator gives it. */
const accessInputSchema = z.discriminatedUnion('scope', [
  z.strictObject({ scope: z.literal('global') }),
  z.strictObject({
    scope: z.literal('restricted'),
    rootProfileIds: z.array(z.uuid().toLowerCase()).min(1).max(10_000),
  }),
]);

const rateLimitPerMinute = z.number().int().min(1).max(1_000_000).nullable();

/** POST /partners. */
export const partnerCreateSchema = z.object({
  name: adminName(200),
  scopes: scopeList.optional(),
  access: accessInputSchema,
  rateLimitPerMinute: rateLimitPerMinute.optional(),
});

/** PATCH /partners/{id}: only the settings given change. */
export const partnerPatchSchema = z.object({
  name: adminName(200).optional(),
  scopes: scopeList.optional(),
  access: accessInputSchema.optional(),
  disabled: z.boolean().optional(),
  disabledReason: adminName(500)
    .optional()
    .describe('With disabled: true: why (kept with the partner and in the audit log).'),
  rateLimitPerMinute: rateLimitPerMinute.optional(),
});

export const partnerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(ALL_SCOPES)),
    access: z.union([
      z.object({ scope: z.literal('global') }),
      z.object({ scope: z.literal('restricted'), rootProfileIds: z.array(z.string()) }),
    ]),
    rateLimitPerMinute: z.number().int().nullable(),
    disabled: z.boolean(),
    disabledReason: z.string().nullable().describe('Why an operator disabled it (cleared when enabled).'),
    lastUsedAt: z.string().nullable(),
    lastUsedKey: z
      .enum(['current', 'previous'])
      .nullable()
      .describe(
        'Which secret the last use sent: after a rotation with a grace period, whether the partner moved on.',
      ),
    previousSecretValidUntil: z
      .string()
      .nullable()
      .describe('When the previous secret stops working (a rotation with a grace period); null: none works.'),
    secretRotatedAt: z
      .string()
      .nullable()
      .describe(
        "When the partner's secret was last rotated; null: never (or before the service kept it: the audit log's partner.secret_rotated has the time). During a grace, GET /partners/{id}/usage?since=<this> counts the requests made with each secret since then.",
      ),
    testSecretIssuedAt: z
      .string()
      .nullable()
      .describe(
        "When the partner's test secret (fc_test_…, docs/test-mode.md) was issued; null: it holds none.",
      ),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Partner' });

/** The answer to POST /partners: the partner and its first secret, shown this once. */
export const partnerWithSecretSchema = partnerSchema.extend({ secret: z.string() });

/** The answer to POST /partners/{id}/rotate-secret. */
export const rotatedSecretSchema = z.object({
  id: z.string(),
  secret: z.string(),
  previousSecretValidUntil: z.string().nullable(),
});

/** A test secret as issued (docs/test-mode.md): shown in this one answer only. */
export const testSecretSchema = z.object({
  id: z.string(),
  secret: z.string().describe('The test secret, fc_test_…: shown once, here.'),
});

export type PartnerView = z.output<typeof partnerSchema>;
export type AccessInput = z.output<typeof accessInputSchema>;
export type PartnerCreate = z.output<typeof partnerCreateSchema>;
export type PartnerPatchInput = z.output<typeof partnerPatchSchema>;
export type RotatedSecret = z.output<typeof rotatedSecretSchema>;
export type PartnerWithSecret = z.output<typeof partnerWithSecretSchema>;

const use = z.object({
  requests: z.number().int(),
  firstAt: z.string().nullable().describe('When the first of them arrived (to the millisecond).'),
  lastAt: z.string().nullable().describe('When the last of them arrived (to the millisecond).'),
});

/**
 * GET /partners/{id}/rotation: which secret the partner's requests sent since its last rotation,
 * counted per request (never per minute), and the one verdict drawn from those counts.
 */
export const rotationSchema = z
  .object({
    rotatedAt: z.string().nullable().describe('When the secret was last rotated; null: never.'),
    previousSecretValidUntil: z
      .string()
      .nullable()
      .describe('When the previous secret stops working; null: none works (no grace, or it ended).'),
    verdict: z
      .enum(['never_rotated', 'not_moved', 'moving', 'moved'])
      .describe(
        'not_moved: no request with the new secret yet. moving: both in use (a request with the previous secret came after the first with the new one). moved: the new secret is used, and no request with the previous secret came after the first with it. never_rotated: no rotation to move from.',
      ),
    newSecret: use.describe('Requests with the current secret since the rotation.'),
    previousSecret: use.describe('Requests with the previous secret since the rotation (during its grace).'),
    retiredSecrets: use.describe('Requests with a retired secret since the rotation (refused with 401).'),
    beforeRotation: use.describe(
      'Requests before the rotation (with the secret that was current then): the partner was active.',
    ),
  })
  .meta({ id: 'SecretRotation' });

export type RotationView = z.output<typeof rotationSchema>;
