/**
 * Which listings a request sees and writes (docs/test-mode.md): the live ones, or the test data of
 * the partner whose test secret it sent. Every listing read and write takes one, so none can
 * forget it. Defined here, where it becomes SQL; the domain re-exports it (domain/access.ts).
 */
export type Mode = { test: false } | { test: true; partnerId: string };
export const LIVE: Mode = { test: false };

/**
 * The one place a request's mode becomes SQL (docs/test-mode.md): live rows for a live request,
 * the caller's own test rows for a test request. Appends its parameter to `params`. The live
 * predicate is a literal, not a parameter, so the planner keeps choosing the live indexes.
 */
export function modeSql(mode: Mode, params: unknown[], alias = 'l'): string {
  if (!mode.test) return `NOT ${alias}.test`;
  params.push(mode.partnerId);
  return `${alias}.test AND ${alias}.partner_id = $${params.length}::uuid`;
}

/** Whose listings a write touches: a partner's live ones, or its test ones. */
export interface Owner {
  partnerId: string;
  test: boolean;
}

export const ownerOf = (partner: { id: string; test: boolean }): Owner => ({
  partnerId: partner.id,
  test: partner.test,
});
