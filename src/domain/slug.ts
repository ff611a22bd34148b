import { randomBytes } from 'node:crypto';

/**
 * A public slug: lowercase ASCII words from brand, model, variant and year, then a short random
 * suffix that makes it unique. Fixed at creation, so public links never break.
 */
export function makeSlug(parts: readonly unknown[]): string {
  const words = parts
    .filter((p) => p !== null && p !== undefined && p !== '')
    .map(String)
    .join(' ')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
  const suffix = randomBytes(6)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')
    .slice(0, 8);
  return words ? `${words}-${suffix}` : `listing-${suffix}`;
}
