import { z } from 'zod';

/*
 * Resources of the operator API that only the routes and the CLI read (the domain builds them
 * from store rows without a type of its own): the routes answer with these schemas, the CLI's
 * types are derived from them.
 */

/** A named operator token, never the token itself. */
export const operatorSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: z.string(),
    createdBy: z.string().describe('The operator who created it (or ADMIN_TOKEN).'),
    lastUsedAt: z.string().nullable().describe('To the minute.'),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'OperatorToken' });

/** The answer to POST /operators: the token, shown only then. */
export const operatorWithTokenSchema = operatorSchema.extend({ token: z.string() });

/** One entry of the audit log. */
export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string(),
    actor: z
      .string()
      .describe(
        'operator (admin API), partner (its own webhook endpoints), service, or anonymous (a failed partner authentication)',
      ),
    operator: z.string().nullable().describe("Which operator acted: a token's name, or ADMIN_TOKEN."),
    action: z
      .string()
      .describe(
        'partner.created, partner.updated, partner.disabled, partner.enabled, partner.secret_rotated, partner.test_secret_issued, partner.test_secret_revoked, dealer.created, dealer.updated, dealers.imported, operator.created, operator.revoked, auth.failed, webhook.*',
      ),
    partnerId: z.string().nullable(),
    partnerName: z.string().nullable().describe("The partner's current name."),
    dealerId: z.string().nullable(),
    dealerCode: z.string().nullable().describe("The dealer profile's location code."),
    clientIp: z.string().nullable(),
    requestId: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEntry' });

export type OperatorToken = z.output<typeof operatorSchema>;
export type OperatorWithToken = z.output<typeof operatorWithTokenSchema>;
export type AuditEntry = z.output<typeof auditEntrySchema>;
