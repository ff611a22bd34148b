import { LIVE, type Mode } from '../store/listings/mode.js';
import { profileForbidden } from './errors.js';
import { messages } from './messages.js';

export type Scope = 'read:listings' | 'read:locations' | 'write:listings' | 'manage:webhooks';
export const ALL_SCOPES: readonly Scope[] = [
  'read:listings',
  'read:locations',
  'write:listings',
  'manage:webhooks',
];

export const isScope = (value: string): value is Scope => (ALL_SCOPES as readonly string[]).includes(value);
export const DEFAULT_SCOPES: readonly Scope[] = ['read:listings', 'read:locations'];

/** What one partner may see. `profileIds` is the closed set: roots and every descendant. */
export type Access =
  | { scope: 'global'; rootProfileIds: []; profileIds: [] }
  | { scope: 'restricted'; rootProfileIds: string[]; profileIds: string[] };

// A request's mode, live or test (docs/test-mode.md): the store turns it into SQL.
export { LIVE, type Mode };

/** The mode of a request by this partner. */
export const modeOf = (partner: Pick<Partner, 'id' | 'test'>): Mode =>
  partner.test ? { test: true, partnerId: partner.id } : LIVE;

/** The mode of a webhook endpoint's walks: the mode of the secret that registered it. */
export const endpointMode = (endpoint: { partnerId: string; test: boolean }): Mode =>
  endpoint.test ? { test: true, partnerId: endpoint.partnerId } : LIVE;

export interface Partner {
  id: string;
  /** The request sent the partner's test secret. */
  test: boolean;
  name: string;
  scopes: Scope[];
  access: Access;
  rateLimitPerMinute: number | null;
}

export function isGlobal(access: Access): boolean {
  return access.scope === 'global';
}

export function inScope(access: Access, profileId: string): boolean {
  return access.scope === 'global' || access.profileIds.includes(profileId);
}

/** Throws PROFILE_FORBIDDEN unless every id is inside the partner's access scope. */
export function assertInScope(access: Access, profileIds: readonly string[]): void {
  for (const id of profileIds) {
    if (!inScope(access, id)) {
      // Unknown and out-of-scope ids get the same answer, so a partner cannot probe which ids exist.
      throw profileForbidden(messages.dealerNotInScope(id));
    }
  }
}

/**
 * The profile ids a list may show: the partner's scope, narrowed by each filter set the request
 * named. `null` means unbounded (a global partner with no filter).
 */
export function narrow(access: Access, filters: readonly (readonly string[])[]): string[] | null {
  let result: Set<string> | null = access.scope === 'global' ? null : new Set(access.profileIds);
  for (const filter of filters) {
    const next = new Set(filter);
    result = result === null ? next : new Set([...result].filter((id) => next.has(id)));
  }
  return result === null ? null : [...result];
}
