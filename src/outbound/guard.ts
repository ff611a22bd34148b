import { type LookupAddress, lookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressKind, isAllowedAddress, RefusedAddressError } from './addresses.js';

/**
 * The outbound rules every call the service makes to a URL a partner gave follows (webhook
 * deliveries, image checks): which addresses it may reach, checked at every connection, after
 * DNS. `rule` ends each refusal, in the caller's words ("webhooks go to public addresses only").
 */
export interface OutboundRules {
  allowPrivate: boolean;
  allowLoopback?: boolean | undefined;
  rule: string;
}

/**
 * Why a URL's host, when it is an IP literal, may not be reached; null when it may, or when it
 * is a name (names are checked by the lookup below). Node connects to a literal without any
 * lookup, so the lookup's check never sees it: this is its check.
 */
export function refusedLiteral(host: string, rules: OutboundRules): string | null {
  if (isIP(host) === 0 || isAllowedAddress(host, rules)) return null;
  return `${host} is ${addressKind(host)}: ${rules.rule}`;
}

/**
 * A DNS lookup for an http(s) agent that refuses the connection unless every address the name
 * resolves to is allowed, and hands connect() the very addresses it checked. Node connects to
 * what the lookup returns, so the address is pinned: a name that answered 8.8.8.8 when checked
 * cannot answer 10.0.0.1 at connect time (DNS rebinding), because no second lookup happens.
 */
export function guardedLookup(rules: OutboundRules): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    lookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((a) => !isAllowedAddress(a.address, rules));
      if (refused) {
        const why = new RefusedAddressError(
          `${hostname} resolves to ${refused.address}, ${addressKind(refused.address)}: ${rules.rule}`,
        );
        return callback(why, '', 0);
      }
      if (lookupOptions.all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

export interface GuardedAgents {
  'http:': http.Agent;
  'https:': https.Agent;
}

/**
 * Keep-alive agents for both schemes, connecting through the guarded lookup. `idleMs`, when
 * given, closes a kept-alive socket left idle that long.
 */
export function guardedAgents(
  rules: OutboundRules,
  options: { maxSockets: number; idleMs?: number },
): GuardedAgents {
  const lookup = guardedLookup(rules);
  const common = {
    keepAlive: true,
    maxSockets: options.maxSockets,
    lookup,
    ...(options.idleMs === undefined ? {} : { timeout: options.idleMs }),
  };
  return { 'https:': new https.Agent(common), 'http:': new http.Agent(common) };
}
