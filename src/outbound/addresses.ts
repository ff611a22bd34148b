import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go. Only ordinary public unicast addresses: private (10/8, 172.16/12,
 * 192.168/16), loopback, link-local (169.254/16, with the cloud metadata service at
 * 169.254.169.254), carrier-grade NAT (100.64/10, Alibaba's metadata), unique-local (fc00::/7,
 * AWS's IPv6 metadata), multicast, documentation and reserved ranges are refused, and so are the
 * IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo) unless the address inside
 * is public itself. ipaddr.js (Express's proxy-addr uses it) keeps the table of special ranges.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process(): an IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 one inside.
  return ipaddr.process(address).range() === 'unicast';
}

/** Why an address is refused, in words a partner understands. */
export function addressKind(address: string): string {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const range = ipaddr.process(address).range();
  const words: Record<string, string> = {
    private: 'a private network address',
    loopback: 'a loopback address',
    linkLocal: 'a link-local address (this range holds cloud metadata services)',
    uniqueLocal: 'a unique-local (private) IPv6 address',
    carrierGradeNat: 'a carrier-grade NAT address',
    unspecified: 'the unspecified address',
    multicast: 'a multicast address',
    broadcast: 'the broadcast address',
    reserved: 'a reserved address',
  };
  return words[range] ?? `a special-purpose address (${range})`;
}

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
  readonly code = 'EFORBIDDENADDRESS';
}

/** The host of a URL without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Every address a host name resolves to, or the IP literal itself. A name with no address (or a
 * lookup that fails or takes longer than `timeoutMs`) is an error saying so.
 */
export async function resolveHost(host: string, timeoutMs = 3000): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`looking up ${host} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return found.map((entry) => entry.address);
  } finally {
    clearTimeout(timer);
  }
}
